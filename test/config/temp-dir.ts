// Temporary directories for configuration tests: created in os.tmpdir(), removed after each test.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/** Call at the top of a test file; `dir()` gives a fresh directory per test. */
export function useTempDir(): { dir: () => string; write: (name: string, text: string) => string } {
  let current: string | undefined;
  afterEach(() => {
    if (current !== undefined) rmSync(current, { recursive: true, force: true });
    current = undefined;
  });
  const dir = (): string => {
    current ??= mkdtempSync(join(tmpdir(), "svc-config-"));
    return current;
  };
  const write = (name: string, text: string): string => {
    const path = join(dir(), name);
    writeFileSync(path, text);
    return path;
  };
  return { dir, write };
}
