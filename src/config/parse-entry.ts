// Parses the text of one key with the parser its schema entry's type names.

import type { AnyConfigValue, ListItem, SchemaEntry } from "./schema-types.ts";
import {
  ok,
  type Parsed,
  parseBind,
  parseBindOrOff,
  parseBoolean,
  parseDuration,
  parseEnum,
  parseFile,
  parseFloatValue,
  parseHttpPath,
  parseHttpUrl,
  parseInteger,
  parseList,
  parseName,
  parseNodeName,
  parsePath,
  parseSize,
  parseString,
} from "./values.ts";

const ITEM: Readonly<Record<ListItem, (text: string) => Parsed<string>>> = {
  string: ok,
  node_name: parseNodeName,
  http_url: parseHttpUrl,
};

/** `cwd` resolves relative paths (and is where `file` keys must exist). */
export function parseEntry(entry: SchemaEntry, raw: string, cwd: string): Parsed<AnyConfigValue> {
  const range = { min: entry.min, max: entry.max };
  switch (entry.type) {
    case "duration":
      return parseDuration(raw, "ms", range);
    case "duration_s":
      return parseDuration(raw, "s", range);
    case "size":
      return parseSize(raw, range);
    case "boolean":
      return parseBoolean(raw);
    case "integer":
      return parseInteger(raw, range);
    case "float":
      return parseFloatValue(raw, range);
    case "string":
      return parseString(raw, entry.nonEmpty);
    case "name":
      return parseName(raw);
    case "node_name":
      return parseNodeName(raw);
    case "enum":
      return parseEnum(raw, entry.values ?? []);
    case "bind":
      return parseBind(raw);
    case "bind_or_off":
      return parseBindOrOff(raw);
    case "list": {
      const { values } = entry;
      const item = values !== undefined ? (t: string) => parseEnum(t, values) : ITEM[entry.item ?? "string"];
      return parseList(raw, item, entry.nonEmpty);
    }
    case "path":
      return parsePath(raw, cwd);
    case "file":
      return parseFile(raw, cwd);
    case "http_path":
      return parseHttpPath(raw);
  }
}
