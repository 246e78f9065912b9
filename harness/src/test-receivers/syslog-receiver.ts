// A real local syslog receiver for tests: UDP (one message per datagram) or TCP with octet-counting
// framing (RFC 6587 §3.4.1), and a strict RFC 5424 parser so a test sees exactly what a SIEM would.
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';

export interface SyslogMessage {
  at: number;
  pri: number;
  facility: number;
  severity: number;
  version: number;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  /** SD-ID → params (values unescaped). */
  structuredData: Record<string, Record<string, string>>;
  msg: string;
  raw: string;
}

/** Parses one RFC 5424 message; throws on anything the ABNF does not allow. */
export function parseRfc5424(raw: string): Omit<SyslogMessage, 'at'> {
  const head = /^<(\d{1,3})>(\d{1,2}) (\S+) (\S{1,255}) (\S{1,48}) (\S{1,128}) (\S{1,32}) /.exec(raw);
  if (!head) throw new Error(`not RFC 5424: ${raw.slice(0, 80)}`);
  const pri = Number(head[1]);
  if (pri > 191) throw new Error('PRI out of range');
  const timestamp = head[3] as string;
  if (timestamp !== '-' && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/.test(timestamp))
    throw new Error(`bad TIMESTAMP ${timestamp}`);
  for (const field of head.slice(4, 8))
    if (!/^[\x21-\x7e]+$/.test(field as string)) throw new Error('non-printable header field');
  let rest = raw.slice(head[0].length);
  const structuredData: Record<string, Record<string, string>> = {};
  if (rest.startsWith('-')) rest = rest.slice(1);
  else {
    while (rest.startsWith('[')) {
      const id = /^\[([^\s=\]"]{1,32})/.exec(rest);
      if (!id) throw new Error('bad SD-ID');
      rest = rest.slice(id[0].length);
      const params: Record<string, string> = {};
      for (;;) {
        if (rest.startsWith(']')) {
          rest = rest.slice(1);
          break;
        }
        const p = /^ ([^\s=\]"]{1,32})="((?:[^"\\\]]|\\["\\\]])*)"/.exec(rest);
        if (!p) throw new Error(`bad SD-PARAM near ${rest.slice(0, 40)}`);
        params[p[1] as string] = (p[2] as string).replace(/\\(["\\\]])/g, '$1');
        rest = rest.slice(p[0].length);
      }
      structuredData[id[1] as string] = params;
    }
  }
  let msg = '';
  if (rest.startsWith(' ')) msg = rest.slice(1).replace(/^\ufeff/, '');
  else if (rest !== '') throw new Error('garbage after STRUCTURED-DATA');
  return {
    pri,
    facility: pri >> 3,
    severity: pri & 7,
    version: Number(head[2]),
    timestamp,
    hostname: head[4] as string,
    appName: head[5] as string,
    procId: head[6] as string,
    msgId: head[7] as string,
    structuredData,
    msg,
    raw,
  };
}

/** Splits an octet-counted TCP stream into messages; returns what remains incomplete. */
export function deframe(buffer: Buffer, out: string[]): Buffer {
  let b = buffer;
  for (;;) {
    const space = b.indexOf(0x20);
    if (space < 0) return b;
    const len = b.subarray(0, space).toString('ascii');
    if (!/^[1-9]\d{0,8}$/.test(len)) throw new Error(`bad octet count ${JSON.stringify(len)}`);
    const n = Number(len);
    if (b.length < space + 1 + n) return b;
    out.push(b.subarray(space + 1, space + 1 + n).toString('utf8'));
    b = b.subarray(space + 1 + n);
  }
}

export interface SyslogReceiver {
  /** `udp://127.0.0.1:PORT` or `tcp://127.0.0.1:PORT` (NODE_NOTIFY__SYSLOG). */
  readonly target: string;
  readonly messages: SyslogMessage[];
  /** Messages that failed to parse (should stay empty). */
  readonly errors: string[];
  close(): Promise<void>;
}

export async function startSyslogReceiver(protocol: 'udp' | 'tcp', port = 0): Promise<SyslogReceiver> {
  const messages: SyslogMessage[] = [];
  const errors: string[] = [];
  const accept = (raw: string) => {
    try {
      messages.push({ at: Date.now(), ...parseRfc5424(raw) });
    } catch (err) {
      errors.push((err as Error).message);
    }
  };
  if (protocol === 'udp') {
    const socket = createSocket('udp4');
    socket.on('message', (data) => accept(data.toString('utf8')));
    await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', resolve));
    const { port: bound } = socket.address();
    return {
      target: `udp://127.0.0.1:${bound}`,
      messages,
      errors,
      close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
    };
  }
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    let pending: Buffer = Buffer.alloc(0);
    s.on('data', (chunk: Buffer) => {
      const out: string[] = [];
      try {
        pending = deframe(Buffer.concat([pending, chunk]), out);
      } catch (err) {
        errors.push((err as Error).message);
        s.destroy();
      }
      for (const m of out) accept(m);
    });
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    target: `tcp://127.0.0.1:${bound}`,
    messages,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
