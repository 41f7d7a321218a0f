// Array functions (emqx-facts 1.2): nth(n, list) (1-based), length, sublist(len, list),
// sublist(start, len, list) (1-based start), first, last, contains(elem, list). An index
// outside the list, or first/last of an empty list, is an error (as Erlang's lists module).

import { RuleEvalError } from "../errors.ts";
import { termEqual } from "../values.ts";
import { argInt, argList } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

export const arrayFunctions: FnTable = {
  nth: fn(2, (a) => {
    const n = argInt("nth", a, 0);
    const l = argList("nth", a, 1);
    if (n < 1 || n > l.length) throw new RuleEvalError(`badarg: nth(${n}) of a list of ${l.length}`);
    return l[n - 1];
  }),
  length: fn(1, (a) => argList("length", a, 0).length),
  sublist: fn([2, 3], (a) => {
    if (a.length === 2) {
      const len = argInt("sublist", a, 0);
      const l = argList("sublist", a, 1);
      if (len < 0) throw new RuleEvalError(`badarg: sublist length ${len}`);
      return l.slice(0, len);
    }
    const start = argInt("sublist", a, 0);
    const len = argInt("sublist", a, 1);
    const l = argList("sublist", a, 2);
    if (start < 1 || start > l.length + 1 || len < 0) {
      throw new RuleEvalError(`badarg: sublist(${start}, ${len}) of a list of ${l.length}`);
    }
    return l.slice(start - 1, start - 1 + len);
  }),
  first: fn(1, (a) => {
    const l = argList("first", a, 0);
    if (l.length === 0) throw new RuleEvalError("badarg: first([])");
    return l[0];
  }),
  last: fn(1, (a) => {
    const l = argList("last", a, 0);
    if (l.length === 0) throw new RuleEvalError("badarg: last([])");
    return l[l.length - 1];
  }),
  contains: fn(2, (a) => argList("contains", a, 1).some((x) => termEqual(x, a[0]))),
};
