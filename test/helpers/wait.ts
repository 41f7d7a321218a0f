// Waiting on a condition (never on a fixed delay): polls `pred` until it holds or `timeout` ms pass.

export async function waitUntil(
  pred: () => boolean | Promise<boolean>,
  what = "condition",
  timeout = 5000,
): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
