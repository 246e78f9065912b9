// A ledger node that lies, for the verifiers' tests: a real HTTP server that answers GET /evidence and GET /blocks/0
// with whatever case it is told to serve (real evidence, or evidence forged one of the ways the shared vectors list),
// and, given an upstream node, passes every other request there unchanged (so a browser can load the real /ui
// console from it, same origin, and meet the forged answers). Every verifier we ship is pointed at it and must refuse
// each forgery with its reason, and accept the real evidence.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Block } from '@scriptorium/ledger-protocol';

/** What the node serves while a case is on: the evidence at /evidence/{height}/{index}, and block 0. */
export interface HostileCase {
  height: number;
  index: number;
  evidence: unknown;
  /** Block 0 as served; the real genesis when absent. */
  served_genesis?: unknown;
}

export interface HostileNode {
  readonly url: string;
  /** Serve this case from now on. */
  serve(c: HostileCase): void;
  /** Requests answered so far, as "METHOD path" (what a verifier fetched). */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startHostileNode(options: { genesis: Block; upstream?: string }): Promise<HostileNode> {
  let current: HostileCase | undefined;
  const requests: string[] = [];
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) =>
    res
      .writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        // As the real node's open reads: a console on another origin may read them.
        'access-control-allow-origin': '*',
        'cache-control': 'no-store',
      })
      .end(JSON.stringify(body));
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    requests.push(`${req.method} ${path}`);
    if (req.method === 'GET' && path === '/blocks/0') return json(res, 200, current?.served_genesis ?? options.genesis);
    const m = /^\/evidence\/(\d+)\/(\d+)$/.exec(path);
    if (req.method === 'GET' && m) {
      if (current && Number(m[1]) === current.height && Number(m[2]) === current.index)
        return json(res, 200, current.evidence);
      return json(res, 404, { error: `no record ${m[2]} in block ${m[1]}` });
    }
    if (!options.upstream) return json(res, 404, { error: 'not served by this test node' });
    try {
      const upstream = await fetch(`${options.upstream}${path}`, {
        method: req.method,
        headers: { accept: req.headers.accept ?? '*/*', 'accept-encoding': 'identity' },
      });
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, key) => {
        if (key !== 'content-length' && key !== 'content-encoding' && key !== 'transfer-encoding') headers[key] = value;
      });
      res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
    } catch (err) {
      json(res, 502, { error: `upstream: ${(err as Error).message}` });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    serve(c) {
      current = c;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
