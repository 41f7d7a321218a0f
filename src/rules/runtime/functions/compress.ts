// Compression functions (emqx-facts 1.2), with Erlang zlib's formats: gzip/gunzip (gzip),
// zip/unzip (raw deflate), zip_compress/zip_uncompress (zlib format). Results are binaries
// (text when the bytes are valid UTF-8). Corrupt input, or output past 16 MiB, is an error.

import type { Buffer } from "node:buffer";
import { deflateRawSync, deflateSync, gunzipSync, gzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { RuleEvalError } from "../errors.ts";
import { binOut } from "../values.ts";
import { argBytes } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

const MAX_OUTPUT = 16 * 1024 * 1024;

function codec(name: string, f: (b: Buffer, opts: { maxOutputLength: number }) => Buffer) {
  return fn(1, (a) => {
    const input = argBytes(name, a, 0);
    try {
      return binOut(f(input, { maxOutputLength: MAX_OUTPUT }));
    } catch (e) {
      throw new RuleEvalError(`data_error: ${name}: ${(e as Error).message}`);
    }
  });
}

export const compressFunctions: FnTable = {
  gzip: codec("gzip", gzipSync),
  gunzip: codec("gunzip", gunzipSync),
  zip: codec("zip", deflateRawSync),
  unzip: codec("unzip", inflateRawSync),
  zip_compress: codec("zip_compress", deflateSync),
  zip_uncompress: codec("zip_uncompress", inflateSync),
};
