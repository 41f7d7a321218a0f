// Alarms: raised and cleared by the OS monitor when its thresholds are forced (in the node's
// configuration at start, then changed at run time), published to $SYS alarms/alert and
// alarms/clear, listed as present and, once cleared, in the history with `id`, `desc` and
// `clear_at`; other parts of the node raise and clear their own through the same API.

import { describe, expect, it } from "vitest";
import { connect, useNode, waitUntil } from "../conformance/helpers.ts";

const DATETIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

describe("alarms", () => {
  const node = useNode({
    "sysmon.os.cpu_check_interval": "100ms",
    "sysmon.os.mem_check_interval": "100ms",
    // Forced: any CPU usage and any process memory is at or above 0 %.
    "sysmon.os.cpu_high_watermark": "0",
    "sysmon.os.cpu_low_watermark": "0",
    "sysmon.os.procmem_high_watermark": "0",
    // Never: no machine uses 100 % of its memory.
    "sysmon.os.sysmem_high_watermark": "100",
  });

  it("raises the CPU and process memory alarms when the configured threshold is crossed", async () => {
    const n = node();
    const names = () => n.services.metrics.alarmsPresent().map((a) => a.id);
    await waitUntil(() => names().includes("cpu_high_watermark") && names().includes("high_process_memory_usage"));
    expect(names()).not.toContain("high_system_memory_usage");
    const cpu = n.services.metrics.alarmsPresent().find((a) => a.id === "cpu_high_watermark");
    expect(cpu).toMatchObject({ name: "cpu_high_watermark", activated: true, details: { high_watermark: 0 } });
    expect(cpu?.desc).toMatch(/^CPU usage [\d.]+% is at or above 0%$/);
    expect(cpu?.message).toBe(cpu?.desc);
    expect(cpu?.activate_at).toMatch(DATETIME);
  });

  it("publishes alert and clear on $SYS and keeps the cleared alarm in the history", async () => {
    const n = node();
    const sub = await connect(n, 5);
    await sub.c.subscribeAsync(`$SYS/brokers/${n.broker.nodeName}/alarms/#`, { qos: 0 });
    const name = "high_system_memory_usage";

    n.sys.osmon.settings.sysmemHighWatermark = 0;
    const alert = await sub.inbox.waitFor((m) => m.topic.endsWith("/alarms/alert") && m.payload.includes(name));
    const a = JSON.parse(alert.payload) as Record<string, unknown>;
    expect(a).toMatchObject({ id: name, name, activated: true });
    expect(a.desc).toMatch(/^System memory usage [\d.]+% is at or above 0%$/);
    expect(a.activate_at).toMatch(DATETIME);
    expect(n.services.metrics.alarmsPresent().map((x) => x.id)).toContain(name);

    n.sys.osmon.settings.sysmemHighWatermark = 100;
    const clear = await sub.inbox.waitFor((m) => m.topic.endsWith("/alarms/clear") && m.payload.includes(name));
    const c = JSON.parse(clear.payload) as Record<string, unknown>;
    expect(c).toMatchObject({ id: name, name, desc: a.desc, activate_at: a.activate_at, activated: false });
    expect(c.clear_at).toMatch(DATETIME);
    expect(n.services.metrics.alarmsPresent().map((x) => x.id)).not.toContain(name);
    const h = n.services.metrics.alarmsHistory().filter((x) => x.id === name);
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({ id: name, desc: a.desc, clear_at: c.clear_at });
  });

  it("lets other parts raise and clear their own alarms once each", async () => {
    const n = node();
    const alarms = n.sys.alarms;
    expect(alarms.activate("resource_down", "Resource resource:1 is down", { resource: "resource:1" })).toBe(true);
    expect(alarms.activate("resource_down", "again")).toBe(false);
    expect(n.services.metrics.alarmsPresent().find((x) => x.id === "resource_down")).toMatchObject({
      desc: "Resource resource:1 is down",
      details: { resource: "resource:1" },
    });
    expect(alarms.deactivate("resource_down")).toBe(true);
    expect(alarms.deactivate("resource_down")).toBe(false);
    expect(alarms.isActive("resource_down")).toBe(false);
    const h = n.services.metrics.alarmsHistory().filter((x) => x.id === "resource_down");
    expect(h.map((x) => [x.desc, DATETIME.test(x.clear_at)])).toEqual([["Resource resource:1 is down", true]]);
  });
});
