// A lossy path between the brokers and a node's notification route, for tests and the benchmark: an HTTP proxy that
// forwards each request (method, path, headers, body) to the node and drops a chosen share of them — the broker
// gets its 204 either way, as it does when a notification is lost further on (brokers do not retry). Which ones
// are dropped is decided by a seeded generator, so a run can be repeated; every dropped body is kept, so a test
// knows exactly which changes no notification announced. `by: 'change'` decides by what the notification says
// (its entities as notified) rather than by request: proxies in front of several nodes, seeded alike, then drop
// the same changes for every node — a broker that lost them.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '@scriptorium/test-support/random';
import { Agent, request } from 'undici';

export interface DroppedRequest {
  path: string;
  body: string;
}

export interface DroppingProxy {
  /** Base URL to give the brokers in place of the node's (no trailing slash). */
  readonly url: string;
  /** Requests forwarded, and those dropped. */
  readonly forwarded: number;
  readonly dropped: DroppedRequest[];
  /** The node's answers to forwarded requests by status, and forwards that failed (answered 502 to the broker). */
  readonly answers: Readonly<Record<number, number>>;
  readonly failed: number;
  /** Changes the share dropped from now on (0 to 1). */
  setDropRate(rate: number): void;
  close(): Promise<void>;
}

const readAll = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });

/**
 * Starts a proxy to `target` (the node's base URL) dropping `dropRate` of the requests.
 * @example const proxy = await startDroppingProxy('http://127.0.0.1:8000', { dropRate: 0.1, seed: 7 });
 */
export async function startDroppingProxy(
  target: string,
  options: { dropRate: number; seed?: number; ca?: Buffer; by?: 'request' | 'change' } = { dropRate: 0.1 },
): Promise<DroppingProxy> {
  const random = seededRandom(options.seed ?? 1);
  /** A number in [0, 1) from the notified entities (the same for every subscription's copy of one change). */
  const ofChange = (body: string) => {
    let data: unknown;
    try {
      data = (JSON.parse(body) as { data?: unknown }).data;
    } catch {
      return random();
    }
    const digest = createHash('sha256')
      .update(`${options.seed ?? 1}:${JSON.stringify(data)}`)
      .digest();
    return digest.readUInt32BE(0) / 4294967296;
  };
  let rate = options.dropRate;
  let forwarded = 0;
  let failed = 0;
  const answers: Record<number, number> = {};
  const dropped: DroppedRequest[] = [];
  const agent = new Agent({ connections: 64, connect: options.ca ? { ca: options.ca } : {} });
  const server: Server = createServer((req, res) => {
    readAll(req)
      .then(async (body) => {
        const path = req.url ?? '/';
        if ((options.by === 'change' ? ofChange(body) : random()) < rate) {
          dropped.push({ path, body });
          res.writeHead(204).end();
          return;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
        const answer = await request(`${target}${path}`, {
          method: (req.method ?? 'POST') as 'POST',
          headers,
          body,
          dispatcher: agent,
        });
        forwarded++;
        answers[answer.statusCode] = (answers[answer.statusCode] ?? 0) + 1;
        const text = await answer.body.text();
        res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text);
      })
      .catch(() => {
        failed++;
        res.writeHead(502).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    dropped,
    answers,
    get failed() {
      return failed;
    },
    setDropRate(r) {
      rate = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          agent.close().then(() => resolve());
        });
      }),
  };
}
