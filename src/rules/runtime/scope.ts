// The evaluation context of one event: a chain of frames (the event's columns at the root, then
// the aliases the SELECT fields add, then a FOREACH item) and the per-evaluation state (the
// decoded payload, cached on first use; the proc_dict_* dictionary). The event's columns are
// never written: aliases go to the frames above them.

import type { FnEnv } from "./functions/types.ts";
import { jsonDecode, type Row, setOwn } from "./values.ts";

const NONE = Symbol("none");

export class Frame implements FnEnv {
  readonly vars: Row;
  readonly parent: Frame | null;
  /** The root frame (the event's columns), which holds the per-evaluation state. */
  readonly state: Frame;
  payloadRaw: unknown = NONE;
  payloadDecoded: unknown = undefined;
  dict: Map<unknown, unknown> | null = null;

  /** A frame of `vars` above `parent`; a new evaluation's root frame when parent is null. */
  constructor(vars: Row, parent: Frame | null) {
    this.vars = vars;
    this.parent = parent;
    this.state = parent === null ? this : parent.state;
  }

  get(name: string): unknown {
    let f: Frame | null = this;
    do {
      if (Object.hasOwn(f.vars, name)) return f.vars[name];
      f = f.parent;
    } while (f !== null);
    return undefined;
  }

  set(name: string, v: unknown): void {
    setOwn(this.vars, name, v);
  }

  /** Every visible name and value, inner frames winning (the family's merged input map). */
  collect(into: Row): Row {
    if (this.parent !== null) this.parent.collect(into);
    for (const k in this.vars) if (Object.hasOwn(this.vars, k)) setOwn(into, k, this.vars[k]);
    return into;
  }

  /** collect() into a new row: the root frame's columns copied at once (own enumerable keys, in order). */
  collectNew(): Row {
    if (this.parent === null) return { ...this.vars };
    const into = this.parent.collectNew();
    const vars = this.vars;
    for (const k in vars) if (Object.hasOwn(vars, k)) setOwn(into, k, vars[k]);
    return into;
  }

  /** A JSON payload (string or binary) decoded, cached per evaluation; other values as they are. */
  decode(raw: unknown): unknown {
    if (typeof raw !== "string" && !(raw instanceof Uint8Array)) return raw;
    const s = this.state;
    if (s.payloadRaw === raw) return s.payloadDecoded;
    const decoded = jsonDecode(raw);
    s.payloadRaw = raw;
    s.payloadDecoded = decoded;
    return decoded;
  }

  payload(): unknown {
    return this.decode(this.get("payload"));
  }

  procDict(): Map<unknown, unknown> {
    if (this.state.dict === null) this.state.dict = new Map();
    return this.state.dict;
  }
}
