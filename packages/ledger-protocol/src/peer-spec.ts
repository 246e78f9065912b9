// Peer spec strings: `<node_id>@<host>:<port>|<public_key>` (spec section 2).
import * as z from 'zod';

export interface PeerSpec {
  nodeId: string;
  host: string;
  port: number;
  /** 64-hex raw Ed25519 public key, lower case. */
  publicKey: string;
}

/** `<node_id>@<host>:<port>|<public_key>`; groups: node id, host, port, key. */
export const PEER_SPEC_PATTERN =
  /^([A-Za-z0-9._-]{1,64})@([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):(\d{1,5})\|([0-9a-fA-F]{64})$/;

/** Parses one peer spec; returns an error string when it is malformed.
 * @example parsePeerSpec('n1@10.0.0.1:8000|' + 'ab'.repeat(32)) */
export function parsePeerSpec(text: string): PeerSpec | string {
  const m = PEER_SPEC_PATTERN.exec(text.trim());
  if (!m) return `not a peer spec <node_id>@<host>:<port>|<public_key>: ${JSON.stringify(text.slice(0, 120))}`;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return `port out of range in ${JSON.stringify(text)}`;
  return { nodeId: m[1] as string, host: m[2] as string, port, publicKey: (m[4] as string).toLowerCase() };
}

export function formatPeerSpec(p: PeerSpec): string {
  return `${p.nodeId}@${p.host}:${p.port}|${p.publicKey}`;
}

/** zod schema that accepts a peer-spec string and outputs the parsed PeerSpec. */
export const peerSpecSchema = z.string().transform((text, ctx) => {
  const parsed = parsePeerSpec(text);
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  }
  return parsed;
});

/** `<host>:<port>`: a DNS name or IPv4 address, or a bracketed IPv6 address, and a port. */
export const HOST_PORT_PATTERN = /^([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):(\d{1,5})$/;

/** Parses `host:port` (the advertise setting, an external validator's address). */
export function parseHostPort(text: string): { host: string; port: number } | string {
  const m = HOST_PORT_PATTERN.exec(text.trim());
  if (!m) return `expected <host>:<port>, got ${JSON.stringify(text)}`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `port out of range in ${JSON.stringify(text)}`;
  return { host: m[1] as string, port };
}
