// Kick over the API disconnects a real client (5.0: DISCONNECT 0x98 Administrative action) and
// ends its session, through v3, v4 and v2 alike; a parked session is kicked too.

import { describe, expect, it } from "vitest";
import { connect, expectError, offline, persistent, req, uid, useNode } from "./helpers.ts";

describe("kick over the API", () => {
  const node = useNode();

  it.each(["/api/v3", "/api/v4"])("DELETE %s/clients/{clientid} disconnects a 5.0 client with 0x98", async (base) => {
    const c = await connect(node(), 5);
    const a = await req(node(), "DELETE", `${base}/clients/${c.id}`);
    expect(a.body).toEqual({ code: 0 });
    expect((await c.disconnect).reasonCode).toBe(0x98);
    await c.closed;
    await offline(node(), c.id);
    expect((await req(node(), "GET", `${base}/clients/${c.id}`)).body.data).toEqual([]);
    expectError(await req(node(), "DELETE", `${base}/clients/${c.id}`), 404, 112);
  });

  it("kicks a 3.1.1 client (the connection closes) and ends a parked session", async () => {
    const c = await connect(node(), 4);
    expect((await req(node(), "DELETE", `/api/v3/clients/${c.id}`)).body).toEqual({ code: 0 });
    await c.closed;
    const id = uid("pk");
    const p = await connect(node(), 4, { clientId: id, ...persistent(4) });
    await p.c.endAsync();
    await offline(node(), id);
    expect((await req(node(), "GET", `/api/v3/clients/${id}`)).body.data[0].connected).toBe(false);
    expect((await req(node(), "DELETE", `/api/v3/clients/${id}`)).body).toEqual({ code: 0 });
    expect((await req(node(), "GET", `/api/v3/clients/${id}`)).body.data).toEqual([]);
  });

  it("the ACL cache of a client that went away answers 112", async () => {
    const c = await connect(node(), 4);
    expect((await req(node(), "GET", `/api/v3/clients/${c.id}/acl_cache`)).body).toEqual({ code: 0, data: [] });
    await c.c.endAsync();
    await offline(node(), c.id);
    expectError(await req(node(), "GET", `/api/v3/clients/${c.id}/acl_cache`), 404, 112);
  });
});
