// The actions svc supplies (emqx-facts §2 and the spec's web-hook actions), in catalogue order.

import { doNothingAction, inspectAction, republishAction } from "./builtin.ts";
import type { ActionDef } from "./types.ts";
import { dataToWebserverAction, webHookEventAction, webHookPublishAction } from "./web-hook.ts";

export const BUILTIN_ACTIONS: readonly ActionDef[] = [
  inspectAction,
  doNothingAction,
  republishAction,
  dataToWebserverAction,
  webHookEventAction,
  webHookPublishAction,
];

export type { ActionContext, ActionDef, ActionEnv, ActionFn } from "./types.ts";
export { ActionError } from "./types.ts";
