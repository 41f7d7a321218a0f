// The operators as functions (emqx-facts 1.2): '+', '-', '*', '/', 'div' (callable as
// `"+"(a, b)`), mod (integer remainder) and eq (Erlang `==`, no coercion).

import { add, divide, intDiv, mul, rem, sub } from "../operators.ts";
import { termEqual } from "../values.ts";
import { type FnTable, fn } from "./types.ts";

export const operatorFunctions: FnTable = {
  "+": fn(2, (a) => add(a[0], a[1])),
  "-": fn(2, (a) => sub(a[0], a[1])),
  "*": fn(2, (a) => mul(a[0], a[1])),
  "/": fn(2, (a) => divide(a[0], a[1])),
  div: fn(2, (a) => intDiv(a[0], a[1])),
  mod: fn(2, (a) => rem(a[0], a[1])),
  eq: fn(2, (a) => termEqual(a[0], a[1])),
};
