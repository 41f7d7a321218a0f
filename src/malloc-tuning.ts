// The C allocator's settings of a broker process, applied by `svc start` before anything else
// (never by a library caller: they are process-wide, and glibc reads them only when a program
// starts, from GLIBC_TUNABLES).
//
// Every socket read becomes a buffer of its own (malloc'd outside V8's heap: direct-read.ts), and
// the young collections forced every 16 MB read (gc-tuning.ts) free those buffers by the thousand.
// glibc then hands the free top of its heap back to the system whenever it exceeds 128 KB (its
// default trim threshold), so the next reads write to fresh pages and page-fault on each of them.
// Under a flood of 16 KB QoS 1 publishes (the bench's fan-in flow against one broker, two runs of
// four 5 s windows, the broker's minor faults and CPU time from /proc/<pid>/stat) that was 0.11-0.75
// faults per message; with the thresholds below 0.00-0.13, broker CPU per message 20-46 -> 15-27
// us, and 15-33k -> 24-34k deliveries/s.
//
// So: the trim threshold is 32 MB, twice what one forced collection frees (128 MB did no better),
// and the mmap threshold 2 MB (setting one threshold turns off glibc's dynamic raising of
// the other; 2 MB keeps a frame of the default 1 MB `mqtt.max_packet_size` in the heap, as the
// dynamic threshold would after the first). The price: up to 32 MB of freed memory stays in the
// process after a burst.

/** Added to GLIBC_TUNABLES by `svc start`. */
export const MALLOC_TUNABLES = "glibc.malloc.trim_threshold=33554432:glibc.malloc.mmap_threshold=2097152";

/**
 * Set by `svc start` when it re-executes itself with the tunables (so that it does so once), or by
 * the user: `off` leaves the allocator's defaults.
 */
export const MALLOC_TUNING_ENV = "SVC_MALLOC_TUNING";

/** The GLIBC_TUNABLES to run with, or null when `env` needs no change. */
export function tunedEnv(env: Readonly<Record<string, string | undefined>>): string | null {
  if (env[MALLOC_TUNING_ENV] !== undefined) return null;
  const current = env.GLIBC_TUNABLES ?? "";
  // The user's own malloc thresholds win.
  if (/glibc\.malloc\.(trim|mmap)_threshold=/.test(current)) return null;
  return current === "" ? MALLOC_TUNABLES : `${current}:${MALLOC_TUNABLES}`;
}

/**
 * On Linux, unless the environment already decides: replaces this process (same PID, same
 * arguments and Node flags, same descriptors) with one started with the tunables. Returns only
 * when nothing was to be done, or when the process could not be replaced (it then runs with the
 * allocator's defaults).
 */
export function applyMallocTuning(): void {
  if (process.platform !== "linux" || typeof process.execve !== "function") return;
  const tunables = tunedEnv(process.env);
  if (tunables === null) return;
  const env = { ...process.env, GLIBC_TUNABLES: tunables, [MALLOC_TUNING_ENV]: "on" };
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
  } catch (err) {
    process.stderr.write(
      `svc: running with the C allocator's defaults: ${err instanceof Error ? err.message : String(err)}\n`,
    );
  }
}
