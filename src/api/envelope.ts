// Success envelopes. v3/v4 (spec 000 §4): `{code: 0, data}`, `{code: 0}` without payload,
// `meta: {page, limit, count}` on paginated lists. v2 (spec 001 §2): `{code: 0, result}`, pages as
// `{current_page, page_size, total_num, total_page, objects}`, single lookups as `{objects}`,
// `[]` when there is no data.

export interface Page {
  page: number;
  limit: number;
}

export function ok(): { code: 0 };
export function ok<T>(data: T): { code: 0; data: T };
export function ok<T>(data?: T): { code: 0; data?: T } {
  return data === undefined ? { code: 0 } : { code: 0, data };
}

export function paged<T>(rows: readonly T[], p: Page): { code: 0; data: T[]; meta: Page & { count: number } } {
  const start = (p.page - 1) * p.limit;
  return {
    code: 0,
    data: rows.slice(start, start + p.limit),
    meta: { page: p.page, limit: p.limit, count: rows.length },
  };
}

/** A page already cut (a cluster-wide list gathered from its nodes) with its total count. */
export interface PageRows<T> {
  rows: T[];
  count: number;
}

/** The window of a page: rows to skip, rows at most. */
export const windowOf = (p: Page): { start: number; limit: number } => ({
  start: (p.page - 1) * p.limit,
  limit: p.limit,
});

export function pagedRows<T>(r: PageRows<T>, p: Page): { code: 0; data: T[]; meta: Page & { count: number } } {
  return { code: 0, data: r.rows, meta: { page: p.page, limit: p.limit, count: r.count } };
}

export function v2ok<T>(result: T): { code: 0; result: T } {
  return { code: 0, result };
}

export const v2done = (): { code: 0; result: [] } => ({ code: 0, result: [] });

export function v2objects<T>(objects: readonly T[]): { code: 0; result: { objects: T[] } } {
  return { code: 0, result: { objects: [...objects] } };
}

export interface V2Page<T> {
  current_page: number;
  page_size: number;
  total_num: number;
  total_page: number;
  objects: T[];
}

/** v2's page of rows already cut (a cluster-wide list), with its total count. */
export function v2pagedRows<T>(r: PageRows<T>, currPage: number, pageSize: number): { code: 0; result: V2Page<T> } {
  return {
    code: 0,
    result: {
      current_page: currPage,
      page_size: pageSize,
      total_num: r.count,
      total_page: Math.ceil(r.count / pageSize),
      objects: r.rows,
    },
  };
}

export function v2paged<T>(rows: readonly T[], currPage: number, pageSize: number): { code: 0; result: V2Page<T> } {
  const start = (currPage - 1) * pageSize;
  return {
    code: 0,
    result: {
      current_page: currPage,
      page_size: pageSize,
      total_num: rows.length,
      total_page: Math.ceil(rows.length / pageSize),
      objects: rows.slice(start, start + pageSize),
    },
  };
}
