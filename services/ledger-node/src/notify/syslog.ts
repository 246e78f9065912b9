// Syslog for SIEMs: RFC 5424 messages over UDP (one datagram each, RFC 5426) or TCP with octet
// counting framing (RFC 6587 §3.4.1: "<length> <message>"). A tamper event is facility 10
// (security/authorization), severity 2 (critical), MSGID TAMPER, with the same ids as the webhook in
// structured data under the SD-ID `tamper@32473` (32473: the example enterprise number of RFC 5424
// §7.2.2; a site that owns a number may change it in one place, SD_ID). The record's light evidence (GET
// /evidence) is the `evidence` parameter, as JSON, so a SIEM can keep it and verify it later with
// `ledger-node verify-proof --genesis`; where the message would not fit one UDP datagram, `evidence_path`
// names the node path that serves the same evidence instead.
// Syslog has no acknowledgement: a UDP datagram or a TCP write into a connection the receiver is
// just dropping can be lost without an error. Webhooks are the channel with end-to-end delivery.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { hostname } from 'node:os';
import type { TamperEvent } from './event.ts';
import { DeliveryError, type Sink } from './sink.ts';

export const FACILITY_SECURITY = 10;
export const SEVERITY_CRITICAL = 2;
export const SD_ID = 'tamper@32473';
export const APP_NAME = 'scriptorium-ledger';
/** The largest message a UDP sink sends: below the 65,507-byte IPv4 datagram payload (RFC 5426 §3.2). */
export const MAX_UDP_MESSAGE_BYTES = 65_000;
const NIL = '-';

/** A header field: printable US-ASCII (33–126), at most `max` characters, NILVALUE when empty. */
function headerField(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '').slice(0, max);
  return clean === '' ? NIL : clean;
}

/** A PARAM-VALUE: `"`, `\` and `]` escaped with a backslash (RFC 5424 §6.3.3). */
const paramValue = (v: string) => v.replace(/[\\"\]]/g, (c) => `\\${c}`);

export interface SyslogFormatOptions {
  hostname?: string;
  procId?: string;
  /** Time of the message (ms); defaults to now. */
  time?: number;
  /** The most bytes the message may take: beyond it the evidence is named by path, not carried. */
  maxBytes?: number;
}

/**
 * One RFC 5424 message (no framing). @example formatTamperSyslog(event) // '<82>1 2026-… host scriptorium-ledger 42 TAMPER [tamper@32473 …] …'
 */
export function formatTamperSyslog(event: TamperEvent, options: SyslogFormatOptions = {}): string {
  const pri = FACILITY_SECURITY * 8 + SEVERITY_CRITICAL;
  const time = new Date(options.time ?? Date.now()).toISOString();
  const r = event.record as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
  const params: Array<[string, string]> = [
    ['record_id', event.id],
    ['chain_id', event.chain_id],
    ['height', String(event.height)],
    ['block_hash', event.block_hash],
    ['verdict', str(r.verdict)],
    ['broker', str(r.broker)],
    ['entity', str(r.entity)],
    ['entity_type', str(r.entity_type)],
    ['attribute', str(r.attribute)],
    ['index', String(event.index)],
    ['merkle_root', event.evidence.proof.merkle_root],
  ];
  const msg = `TAMPERED ${str(r.entity)} ${str(r.attribute) || '(entity)'} on ${str(r.broker)}, block ${event.height}`;
  const message = (evidence: [string, string]) =>
    [
      `<${pri}>1`,
      time,
      headerField(options.hostname ?? hostname(), 255),
      APP_NAME,
      headerField(options.procId ?? String(process.pid), 128),
      'TAMPER',
      `[${SD_ID} ${[...params, evidence].map(([k, v]) => `${k}="${paramValue(v)}"`).join(' ')}]`,
      // BOM: the MSG is UTF-8 (RFC 5424 §6.4).
      `\ufeff${msg}`,
    ].join(' ');
  const full = message(['evidence', JSON.stringify(event.evidence)]);
  if (options.maxBytes === undefined || Buffer.byteLength(full) <= options.maxBytes) return full;
  return message(['evidence_path', `/evidence/${event.height}/${event.index}`]);
}

export interface SyslogTarget {
  protocol: 'udp' | 'tcp';
  host: string;
  port: number;
}

/** Parses `udp://host:port` or `tcp://host:port`, or returns an error message. */
export function parseSyslogTarget(raw: string): SyslogTarget | { error: string } {
  const m = /^(udp|tcp):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw.trim());
  if (!m) return { error: 'expected udp://host:port or tcp://host:port' };
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return { error: 'port out of range' };
  return { protocol: m[1] as 'udp' | 'tcp', host: (m[2] as string).replace(/^\[|\]$/g, ''), port };
}

/** Octet-counting frame (RFC 6587 §3.4.1): the byte length, a space, the message. */
export function octetFrame(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'ascii'), body]);
}

export function createSyslogSink(target: SyslogTarget, options: { timeoutMs?: number } = {}): Sink {
  const name = `syslog:${target.protocol}://${target.host}:${target.port}`;
  const timeoutMs = options.timeoutMs ?? 5000;
  let udp: UdpSocket | undefined;
  let tcp: Socket | undefined;

  async function tcpSocket(): Promise<Socket> {
    // Let pending socket events (a FIN from a receiver that went away) land before reusing it.
    await new Promise((r) => setImmediate(r));
    if (tcp && !tcp.destroyed && !tcp.connecting && tcp.readyState === 'open') return tcp;
    tcp?.destroy();
    return new Promise((resolve, reject) => {
      const s = connect({ host: target.host, port: target.port });
      const timer = setTimeout(() => s.destroy(new Error('connect timeout')), timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        s.setKeepAlive(true);
        s.on('error', () => s.destroy());
        s.on('close', () => {
          if (tcp === s) tcp = undefined;
        });
        tcp = s;
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  return {
    name,
    async deliver(event) {
      const message = formatTamperSyslog(event, target.protocol === 'udp' ? { maxBytes: MAX_UDP_MESSAGE_BYTES } : {});
      try {
        if (target.protocol === 'udp') {
          udp ??= createSocket(target.host.includes(':') ? 'udp6' : 'udp4');
          const data = Buffer.from(message, 'utf8');
          await new Promise<void>((resolve, reject) =>
            (udp as UdpSocket).send(data, target.port, target.host, (err) => (err ? reject(err) : resolve())),
          );
        } else {
          const s = await tcpSocket();
          await new Promise<void>((resolve, reject) =>
            s.write(octetFrame(message), (err) => (err ? reject(err) : resolve())),
          );
        }
      } catch (err) {
        tcp?.destroy();
        tcp = undefined;
        throw new DeliveryError(name, (err as Error & { code?: string }).code ?? (err as Error).message);
      }
    },
    async close() {
      udp?.close();
      tcp?.end();
      tcp?.destroy();
    },
  };
}
