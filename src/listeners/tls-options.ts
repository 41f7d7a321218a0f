// Listener TLS settings -> Node TLS server options, the peer-certificate policy
// (verify / fail_if_no_peer_cert, with the reference broker's meaning) and the peer subject.
import type { SecureVersion, TLSSocket, TlsOptions } from "node:tls";
import { ListenerError } from "./listener.ts";
import type { TlsMaterial } from "./tls-material.ts";
import type { ListenerSettings, PeerCert } from "./types.ts";

const VERSIONS: Record<string, SecureVersion> = {
  tlsv1: "TLSv1",
  "tlsv1.1": "TLSv1.1",
  "tlsv1.2": "TLSv1.2",
  "tlsv1.3": "TLSv1.3",
};
const ORDER: SecureVersion[] = ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];

type TlsPolicy = Pick<ListenerSettings, "verify" | "failIfNoPeerCert">;

/** Lowest and highest of the configured versions; Node cannot skip one in between. */
export function versionRange(tlsVersions: string[]): {
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
} {
  if (tlsVersions.length === 0) return {};
  const ranks = tlsVersions.map((v) => {
    const version = VERSIONS[v.toLowerCase()];
    if (version === undefined) throw new ListenerError(`unknown TLS version "${v}"`);
    return ORDER.indexOf(version);
  });
  return { minVersion: ORDER[Math.min(...ranks)], maxVersion: ORDER[Math.max(...ranks)] };
}

/** A cipher list as OpenSSL reads it: the reference broker's config separates ciphers with commas, OpenSSL with colons. */
export function opensslCiphers(list: string): string;
export function opensslCiphers(list: string | undefined): string | undefined;
export function opensslCiphers(list: string | undefined): string | undefined {
  return list?.replaceAll(",", ":");
}

export function tlsServerOptions(settings: ListenerSettings, material: TlsMaterial): TlsOptions {
  const verifyPeer = settings.verify === "verify_peer";
  const options: TlsOptions = {
    key: material.key,
    cert: material.cert,
    requestCert: verifyPeer,
    // Node's rejectUnauthorized also refuses a missing certificate; only fail_if_no_peer_cert wants
    // that. A presented but invalid certificate is refused in acceptsPeer() instead.
    rejectUnauthorized: verifyPeer && settings.failIfNoPeerCert,
    handshakeTimeout: settings.handshakeTimeout,
    ...versionRange(settings.tlsVersions),
  };
  if (material.ca !== undefined) options.ca = material.ca;
  if (settings.ciphers !== undefined && settings.ciphers !== "") options.ciphers = opensslCiphers(settings.ciphers);
  if (settings.pskCallback !== undefined) options.pskCallback = settings.pskCallback;
  return options;
}

function presentedCert(socket: TLSSocket): boolean {
  return socket.getPeerX509Certificate() !== undefined;
}

/** verify_peer: a presented certificate must verify; a missing one only fails with fail_if_no_peer_cert. */
export function acceptsPeer(socket: TLSSocket, policy: TlsPolicy): boolean {
  if (policy.verify !== "verify_peer" || socket.authorized) return true;
  return presentedCert(socket) ? false : !policy.failIfNoPeerCert;
}

/** Subject of the client certificate: CN, and the DN as "C=..,O=..,CN=.." in certificate order. */
export function peerCertOf(socket: TLSSocket): PeerCert | undefined {
  const cert = socket.getPeerX509Certificate();
  if (cert === undefined) return undefined;
  const parts = cert.subject.split("\n").filter((p) => p !== "");
  const peer: PeerCert = { dn: parts.join(",") };
  const cn = parts.findLast((p) => p.startsWith("CN="));
  if (cn !== undefined) peer.cn = cn.slice(3);
  return peer;
}
