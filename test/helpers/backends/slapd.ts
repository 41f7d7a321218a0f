// A real OpenLDAP for tests: `slapd` (Debian's slapd package) on 127.0.0.1 and a free port, an
// old-style slapd.conf in a temp dir (core, cosine, inetorgperson and the shipped
// etc/ldap/svc-mqtt.schema; an mdb database with suffix dc=svc,dc=test and a root DN), entries
// loaded offline with slapadd before the start. close() removes the dir. Missing binary: see
// describeBackend.

import { execFile } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { waitUntil } from "../wait.ts";
import {
  type BackendProvider,
  type BackendServer,
  backendTempDir,
  findBinary,
  freePort,
  restartable,
  spawnServer,
} from "./process.ts";

export const SLAPD_INSTALL_HINT = "apt-get install slapd ldap-utils";
export const SLAPD_SUFFIX = "dc=svc,dc=test";
export const SLAPD_ROOT_DN = `cn=admin,${SLAPD_SUFFIX}`;
export const SLAPD_ROOT_PW = "admin-secret";

const SCHEMA_DIR = "/etc/ldap/schema";
const MQTT_SCHEMA = fileURLToPath(new URL("../../../etc/ldap/svc-mqtt.schema", import.meta.url));
const SBIN = ["/usr/sbin", "/usr/local/sbin", "/usr/local/libexec"];

export interface SlapdServer extends BackendServer {
  /** `ldap://127.0.0.1:<port>` */
  readonly url: string;
  /** The LDAPS port, when started with TLS material. */
  readonly tlsPort: number | undefined;
}

/** PEM texts of slapd's LDAPS listener. */
export interface SlapdTls {
  cert: string;
  key: string;
  ca: string;
}

export type SlapdProvider =
  | { available: true; start(ldif: string, tls?: SlapdTls): Promise<SlapdServer> }
  | { available: false; reason: string };

export function findSlapd(): SlapdProvider {
  const slapd = findBinary("slapd", SBIN);
  const slapadd = findBinary("slapadd", SBIN);
  if (slapd === undefined || slapadd === undefined || !existsSync(join(SCHEMA_DIR, "core.schema"))) {
    return { available: false, reason: `no slapd / slapadd: install them with \`${SLAPD_INSTALL_HINT}\`` };
  }
  return { available: true, start: (ldif, tls) => startSlapd(slapd, slapadd, ldif, tls) };
}

/** The provider as describeBackend takes it (start() with no entries beyond the suffix). */
export function asBackend(p: SlapdProvider): BackendProvider {
  return p.available ? { available: true, start: () => p.start("") } : p;
}

function slapdConf(dir: string, tls: boolean): string {
  const modules = existsSync("/usr/lib/ldap/back_mdb.la") ? "modulepath /usr/lib/ldap\nmoduleload back_mdb\n" : "";
  const tlsConf = tls
    ? `TLSCACertificateFile ${join(dir, "ca.pem")}
TLSCertificateFile ${join(dir, "cert.pem")}
TLSCertificateKeyFile ${join(dir, "key.pem")}
`
    : "";
  return `${tlsConf}include ${SCHEMA_DIR}/core.schema
include ${SCHEMA_DIR}/cosine.schema
include ${SCHEMA_DIR}/inetorgperson.schema
include ${MQTT_SCHEMA}
pidfile ${join(dir, "slapd.pid")}
${modules}database mdb
maxsize 16777216
suffix "${SLAPD_SUFFIX}"
rootdn "${SLAPD_ROOT_DN}"
rootpw ${SLAPD_ROOT_PW}
directory ${join(dir, "data")}
`;
}

const BASE_LDIF = `dn: ${SLAPD_SUFFIX}
objectClass: dcObject
objectClass: organization
dc: svc
o: svc
`;

/** Whether 127.0.0.1:`port` accepts a connection now. */
function accepts(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

async function startSlapd(slapd: string, slapadd: string, ldif: string, tls?: SlapdTls): Promise<SlapdServer> {
  const dir = backendTempDir("slapd");
  const conf = join(dir, "slapd.conf");
  let proc: Awaited<ReturnType<typeof spawnServer>> | undefined;
  try {
    if (tls !== undefined) {
      writeFileSync(join(dir, "ca.pem"), tls.ca);
      writeFileSync(join(dir, "cert.pem"), tls.cert);
      writeFileSync(join(dir, "key.pem"), tls.key, { mode: 0o600 });
    }
    writeFileSync(conf, slapdConf(dir, tls !== undefined));
    mkdirSync(join(dir, "data"));
    const entries = join(dir, "entries.ldif");
    writeFileSync(entries, `${BASE_LDIF}\n${ldif}`);
    await promisify(execFile)(slapadd, ["-f", conf, "-l", entries]);
    const port = await freePort();
    const tlsPort = tls === undefined ? undefined : await freePort();
    const urls = [`ldap://127.0.0.1:${port}/`];
    if (tlsPort !== undefined) urls.push(`ldaps://127.0.0.1:${tlsPort}/`);
    // -d 32768: stay in the foreground and log only the start and stop lines.
    // "slapd starting" comes before the listener accepts: wait for a connection too.
    const run = async () => {
      const p = await spawnServer(slapd, ["-f", conf, "-h", urls.join(" "), "-d", "32768"], /slapd starting/);
      await waitUntil(() => accepts(port), `slapd accepting on ${port}`, 10_000);
      return p;
    };
    proc = await run();
    return { ...restartable(port, dir, proc, run, "SIGKILL"), url: `ldap://127.0.0.1:${port}`, tlsPort };
  } catch (err) {
    await proc?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
