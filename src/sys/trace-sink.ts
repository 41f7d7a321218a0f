// Where one trace writes: a file opened for appending when the trace starts (so a bad path fails
// the start, not later), written through a stream, flushed and closed when the trace stops.

import { closeSync, createWriteStream, mkdirSync, openSync, type WriteStream } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Logger } from "../telemetry/logger.ts";

export class TraceSink {
  readonly file: string;
  private readonly stream: WriteStream;

  /** Opens `file` (relative to the working directory) for appending; throws when it cannot. */
  constructor(file: string, logger: Logger) {
    this.file = resolve(file);
    mkdirSync(dirname(this.file), { recursive: true });
    const fd = openSync(this.file, "a");
    try {
      this.stream = createWriteStream("", { fd, flags: "a" });
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.stream.on("error", (err) => logger.error({ err, file: this.file }, "trace file write failed"));
  }

  write(line: string): void {
    this.stream.write(line);
  }

  /** Flushes what was written and closes the file. */
  close(): Promise<void> {
    return new Promise((r) => this.stream.end(() => r()));
  }
}
