// One load-generator process: opens its share of publishers and subscribers, runs the flood for
// the scenario's duration, and reports counts and its own CPU time to the parent over IPC.

import { connectRaw } from "./raw-client.js";

process.on("message", async (job) => {
  const { host, port, role, count, topicOf, qos, payloadSize, startAt, duration, id } = job;
  const clients = [];
  for (let i = 0; i < count; i++) {
    clients.push(await connectRaw({ host, port, clientId: `bench-${id}-${role}-${i}` }));
  }
  if (role === "sub") {
    for (let i = 0; i < count; i++) await clients[i].subscribe(topicOf.replace("{i}", String(i + job.offset)), qos);
  }
  process.send({ ready: true });
  const cpu0 = process.cpuUsage();
  const payload = Buffer.alloc(payloadSize, 120);
  const until = startAt + duration;
  let sent = 0;
  if (role === "pub") {
    await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
    const runs = clients.map((c, i) => {
      const t = topicOf.replace("{i}", String(i + job.offset));
      return qos === 0 ? c.floodQos0(t, payload, until) : c.floodQos1(t, payload, until);
    });
    sent = (await Promise.all(runs)).reduce((a, b) => a + b, 0);
  }
  // Deliveries inside the measured window, then a short drain for the totals (QoS 1 losses).
  await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())));
  const inWindow = clients.reduce((a, c) => a + c.received, 0);
  await new Promise((r) => setTimeout(r, 500));
  const received = clients.reduce((a, c) => a + c.received, 0);
  const cpu = process.cpuUsage(cpu0);
  for (const c of clients) c.close();
  process.send({ done: true, sent, received, inWindow, cpuMs: (cpu.user + cpu.system) / 1000 });
  process.exit(0);
});
