// A local port nothing listens on at the time of the call: taken on port 0, then closed. For
// tests that need an address before the server behind it exists (or one that refuses).

import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
