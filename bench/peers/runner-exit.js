// A peer process's end: it exits on SIGTERM/SIGINT or when its stdin closes (the bench runner that
// started it is gone), so that no peer outlives a bench run.

export function exitWithRunner() {
  const quit = () => process.exit(0);
  process.on("SIGTERM", quit);
  process.on("SIGINT", quit);
  process.stdin.on("end", quit);
  process.stdin.on("close", quit);
  process.stdin.resume();
}
