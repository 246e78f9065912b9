// A real local webhook receiver for tests and `make dev`: an HTTP server that keeps (and can print)
// every delivery, verifies its signature the way a receiver should (signature.ts, 300 s tolerance),
// and can be told to fail the next N requests to exercise retries. Given the chain's genesis block, it also
// verifies each event's light evidence, as a receiver that keeps evidence should.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER, type TamperEvent, verifyWebhook } from '@scriptorium/ledger-node/notify';
import { type Block, verifyLightEvidence } from '@scriptorium/ledger-protocol';

export interface ReceivedWebhook {
  at: number;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: TamperEvent;
  /** Signature verified with the receiver's secret (false when it has none). */
  verified: boolean;
  /** The light evidence's verdict against the genesis the receiver was given (undefined without one). */
  evidence: { ok: boolean; reason: string } | undefined;
  idempotencyKey: string | undefined;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Distinct idempotency keys received. */
  keys(): Set<string>;
  /** Answer the next `n` requests with `status` (default 503). */
  failNext(n: number, status?: number): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  options: {
    secret?: string;
    port?: number;
    host?: string;
    /** The chain's block 0, once known (a cluster's genesis is written after its receiver's URL is needed). */
    genesis?: () => Block | undefined;
    print?: (line: string) => void;
  } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let failures = 0;
  let failStatus = 503;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failures > 0) {
        failures--;
        res.writeHead(failStatus).end();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: TamperEvent;
      try {
        body = JSON.parse(raw) as TamperEvent;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const header = req.headers[SIGNATURE_HEADER.toLowerCase()];
      const verified =
        options.secret !== undefined &&
        verifyWebhook(
          options.secret,
          typeof header === 'string' ? header : undefined,
          raw,
          Math.floor(Date.now() / 1000),
        ).ok;
      const key = req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
      const genesis = options.genesis?.();
      const report = genesis ? verifyLightEvidence(body.evidence, genesis) : undefined;
      const evidence = report && { ok: report.ok, reason: report.lines.at(-1) ?? '' };
      received.push({
        at: Date.now(),
        headers: req.headers,
        raw,
        body,
        verified,
        evidence,
        idempotencyKey: typeof key === 'string' ? key : undefined,
      });
      options.print?.(
        `${body.type} record ${body.id.slice(0, 12)}… in block ${body.height} at index ${body.index} ` +
          `(/evidence/${body.height}/${body.index}), signature ${verified ? 'ok' : 'NOT VERIFIED'}` +
          (evidence ? `, evidence ${evidence.ok ? 'VALID from genesis' : `INVALID: ${evidence.reason}`}` : '') +
          `: ${JSON.stringify(body.record)}`,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}/hooks/tamper`,
    received,
    keys: () => new Set(received.map((r) => r.idempotencyKey ?? '')),
    failNext(n, status = 503) {
      failures = n;
      failStatus = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
