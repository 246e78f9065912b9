// The operator's HTTP(S) client to ledger nodes: GET /chain, GET /ready, POST /membership and GET /metrics (spec
// "Integrity Ledger Node", sections 2, 4 and 5), GET /checkpoint/witnesses and /ui/peers (witnessing, and the health
// of other organizations' validators), and for the kubectl plugin GET /blocks, /evidence and /checkpoint. Every call is bounded in time and in body size; a body that
// does not match the contract is a typed error, never a crash. The token is sent only as the bearer header
// of POST /membership and never appears in an error message.
import {
  AcceptedBody,
  ChainStatus,
  ConsolePeersBody,
  MEMPOOL_METRIC,
  ROUND_METRIC,
  ValidatorChange,
  WitnessStatusBody,
} from '@scriptorium/ledger-protocol';
import type { Agent } from 'undici';
import { OperatorError } from '../errors.ts';
import { type ConsensusView, parseConsensusMetrics } from './node-metrics.ts';

export const DEFAULT_TIMEOUT_MS = 5000;
/** A /chain answer of 100 validators is about 7 KB; anything near this bound is not a ledger node. */
export const MAX_RESPONSE_BYTES = 256 * 1024;
/**
 * GET /blocks and GET /evidence answers: a full block of 10,000 records is a few MB; light evidence grows by about
 * 2 KB per membership block, so this bound holds thousands of validator-set changes.
 */
export const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;

/** What the operator reads from a node's GET /chain. `validators` are the active set's public keys. */
export interface ChainView {
  nodeId: string;
  height: number;
  latestHash: string;
  /** Public keys of the active validator set (the spec's `validator_keys`). */
  validators: string[];
  quorum: number;
  isValidator: boolean;
}

export type LedgerNodeErrorKind = 'unreachable' | 'http' | 'bad-body' | 'invalid-request';

/** A call to a ledger node failed. `kind` tells how; `url` names the endpoint (never a credential). */
export class LedgerNodeError extends OperatorError {
  readonly kind: LedgerNodeErrorKind;
  readonly url: string;
  /** HTTP status for `http` (and for `bad-body` when a status was received). */
  readonly status: number | undefined;
  constructor(
    kind: LedgerNodeErrorKind,
    url: string,
    message: string,
    options?: ErrorOptions & { status?: number | undefined },
  ) {
    super(`LEDGER_NODE_${kind.toUpperCase().replace('-', '_')}`, message, options);
    this.name = 'LedgerNodeError';
    this.kind = kind;
    this.url = url;
    this.status = options?.status;
  }
}

/** Parses a /chain body; throws `LedgerNodeError('bad-body')` for anything that is not the spec's shape. */
export function parseChainStatus(body: unknown, url = '/chain'): ChainView {
  const parsed = ChainStatus.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new LedgerNodeError('bad-body', url, `GET ${url}: unexpected body (${where}${issue?.message ?? 'invalid'})`);
  }
  const b = parsed.data;
  return {
    nodeId: b.node_id,
    height: b.height,
    latestHash: b.latest_hash,
    validators: b.validator_keys,
    quorum: b.quorum,
    isValidator: b.is_validator,
  };
}

export interface LedgerNodeClientOptions {
  /** Cluster token (NODE_CLUSTER_TOKEN) for POST /membership. */
  token?: string;
  /** Cluster CA (PEM) that signs the nodes' certificates, for https:// base URLs. */
  caPem?: string;
  /** Client certificate from the cluster CA, needed for POST /membership when the cluster's TLS mode is mutual. */
  clientCert?: { certPem: string; keyPem: string };
  /** Bound on each call, connect to last body byte (default 5000 ms). */
  timeoutMs?: number;
}

interface Answer {
  status: number;
  json: unknown;
  text: string;
}

/**
 * Client to ledger nodes. One instance holds one keep-alive connection pool; `close()` releases it.
 * @example
 * const client = new LedgerNodeClient({ token, caPem });
 * const chain = await client.chain('https://ledger-a-v0.prod.svc:8000');
 */
export class LedgerNodeClient {
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly agentOptions: Agent.Options;
  private agent: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;

  constructor(opts: LedgerNodeClientOptions = {}) {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 120_000)
      throw new OperatorError('LEDGER_CLIENT_OPTIONS', 'timeoutMs must be a whole number from 1 to 120000');
    if (opts.token !== undefined && (opts.token.length === 0 || /[\r\n]/.test(opts.token)))
      throw new OperatorError('LEDGER_CLIENT_OPTIONS', 'token must be non-empty and on one line');
    this.token = opts.token;
    this.timeoutMs = timeoutMs;
    this.agentOptions = {
      connections: 8,
      keepAliveTimeout: 10_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: {
        timeout: timeoutMs,
        ...(opts.caPem ? { ca: opts.caPem } : {}),
        ...(opts.clientCert ? { cert: opts.clientCert.certPem, key: opts.clientCert.keyPem } : {}),
        rejectUnauthorized: true,
      },
    };
  }

  // undici is loaded, and the pool made, on the first call (~30 MB of RSS an operator without ledgers never pays).
  private pool(): Promise<{ agent: Agent; request: typeof import('undici').request }> {
    this.agent ??= import('undici').then((undici) => ({
      agent: new undici.Agent(this.agentOptions),
      request: undici.request,
    }));
    return this.agent;
  }

  /** GET /chain: height, active validator keys, quorum. */
  async chain(baseUrl: string): Promise<ChainView> {
    const url = endpoint(baseUrl, '/chain');
    const answer = await this.call('GET', url);
    if (answer.status !== 200) throw httpError('GET', url, answer);
    return parseChainStatus(answer.json, url);
  }

  /**
   * GET /ready: true on 200 (synced within 1 block of its best peer), false on 503. Any other status, an
   * unreachable node or a timeout is a `LedgerNodeError` so the caller can tell "not ready" from "not there".
   */
  async ready(baseUrl: string): Promise<boolean> {
    const url = endpoint(baseUrl, '/ready');
    const answer = await this.call('GET', url);
    if (answer.status === 200) return true;
    if (answer.status === 503) return false;
    throw httpError('GET', url, answer);
  }

  /**
   * POST /membership with one validator change and the cluster token. Resolves with how many changes the
   * node accepted as new (0: it already had this change pending, or the change does nothing to the next height's
   * validator set). Refusals (401, 400, 429, 503) are errors.
   */
  async submitMembership(baseUrl: string, change: ValidatorChange): Promise<{ accepted: number }> {
    const url = endpoint(baseUrl, '/membership');
    const checked = ValidatorChange.safeParse(change);
    if (!checked.success)
      throw new LedgerNodeError('invalid-request', url, 'change must be {action: ADD|REMOVE, validator: 64-hex key}');
    const answer = await this.call('POST', url, JSON.stringify({ changes: [checked.data] }));
    if (answer.status !== 200) throw httpError('POST', url, answer);
    const parsed = AcceptedBody.safeParse(answer.json);
    if (!parsed.success)
      throw new LedgerNodeError('bad-body', url, `POST ${url}: unexpected body`, { status: answer.status });
    return parsed.data;
  }

  /**
   * GET /metrics, read for consensus progress: the round at the open height and the records waiting (see
   * node-metrics.ts). A body without those gauges is a `bad-body` error.
   */
  async consensus(baseUrl: string): Promise<ConsensusView> {
    const url = endpoint(baseUrl, '/metrics');
    const answer = await this.call('GET', url);
    if (answer.status !== 200) throw httpError('GET', url, answer);
    const view = parseConsensusMetrics(answer.text);
    if (!view)
      throw new LedgerNodeError('bad-body', url, `GET ${url}: no ${ROUND_METRIC} or ${MEMPOOL_METRIC} gauge`, {
        status: answer.status,
      });
    return view;
  }

  /** GET /checkpoint/witnesses: the node's view of witnessing (what each witness cosigned, the policy's coverage). */
  async witnessStatus(baseUrl: string): Promise<WitnessStatusBody> {
    const url = endpoint(baseUrl, '/checkpoint/witnesses');
    const answer = await this.call('GET', url);
    if (answer.status !== 200) throw httpError('GET', url, answer);
    const parsed = WitnessStatusBody.safeParse(answer.json);
    if (!parsed.success)
      throw new LedgerNodeError('bad-body', url, `GET ${url}: not a witness status`, { status: 200 });
    return parsed.data;
  }

  /**
   * GET /ui/peers: the node's peer registry with the height it last saw each peer at (null: it did not answer):
   * how the operator learns the health of validators other organizations run, as its own validators see them.
   */
  async peersView(baseUrl: string): Promise<ConsolePeersBody> {
    const url = endpoint(baseUrl, '/ui/peers');
    const answer = await this.call('GET', url);
    if (answer.status !== 200) throw httpError('GET', url, answer);
    const parsed = ConsolePeersBody.safeParse(answer.json);
    if (!parsed.success) throw new LedgerNodeError('bad-body', url, `GET ${url}: not a peer list`, { status: 200 });
    return parsed.data;
  }

  /** GET /checkpoint: the signed checkpoint as served (text; verify it, nothing here trusts it). */
  async checkpoint(baseUrl: string): Promise<string> {
    const url = endpoint(baseUrl, '/checkpoint');
    const answer = await this.call('GET', url);
    if (answer.status !== 200) throw httpError('GET', url, answer);
    return answer.text;
  }

  /**
   * GET /evidence/{height}/{index}: the record's light evidence, as served (verify it with ledger-protocol's
   * verifyLightEvidence; nothing here trusts it). A 404 is a `LedgerNodeError('http')` with status 404.
   */
  async evidence(baseUrl: string, height: number, index: number): Promise<unknown> {
    return this.document(endpoint(baseUrl, `/evidence/${whole(height)}/${whole(index)}`));
  }

  /** GET /blocks/{height}: the block as served (unverified). */
  async block(baseUrl: string, height: number): Promise<unknown> {
    return this.document(endpoint(baseUrl, `/blocks/${whole(height)}`));
  }

  private async document(url: string): Promise<unknown> {
    const answer = await this.call('GET', url, undefined, MAX_DOCUMENT_BYTES);
    if (answer.status !== 200) throw httpError('GET', url, answer);
    if (answer.json === undefined) throw new LedgerNodeError('bad-body', url, `GET ${url}: not JSON`, { status: 200 });
    return answer.json;
  }

  async close(): Promise<void> {
    const pool = this.agent;
    this.agent = undefined;
    if (pool) await (await pool).agent.close();
  }

  private async call(
    method: 'GET' | 'POST',
    url: string,
    body?: string,
    maxBytes = MAX_RESPONSE_BYTES,
  ): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    }
    let status: number;
    let text: string;
    const { agent, request } = await this.pool();
    try {
      const res = await request(url, {
        method,
        headers,
        body,
        dispatcher: agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.body.destroy();
        throw new LedgerNodeError('bad-body', url, `${method} ${url}: body of ${declared} bytes is too large`, {
          status,
        });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          res.body.destroy();
          throw new LedgerNodeError('bad-body', url, `${method} ${url}: body larger than ${maxBytes} bytes`, {
            status,
          });
        }
        chunks.push(chunk);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (err instanceof LedgerNodeError) throw err;
      throw new LedgerNodeError('unreachable', url, `${method} ${url}: ${describeFailure(err, this.timeoutMs)}`, {
        cause: err,
      });
    }
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      // Non-JSON bodies: an error for 200 answers (checked by the caller's schema), plain text otherwise.
      json = undefined;
    }
    return { status, json, text };
  }
}

/** A height or index in a path: a whole number, or the request is refused before it is made. */
function whole(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new LedgerNodeError('invalid-request', String(n), 'heights and indexes are whole numbers');
  return n;
}

function endpoint(baseUrl: string, path: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new LedgerNodeError('invalid-request', String(baseUrl).slice(0, 200), 'base URL is not a URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search)
    throw new LedgerNodeError('invalid-request', url.origin, 'base URL must be http(s)://host[:port][/prefix]');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${path}`;
}

function httpError(method: string, url: string, answer: Answer): LedgerNodeError {
  const body = answer.json as { error?: unknown } | undefined;
  const detail = typeof body?.error === 'string' ? `: ${body.error.slice(0, 200)}` : '';
  return new LedgerNodeError('http', url, `${method} ${url}: HTTP ${answer.status}${detail}`, {
    status: answer.status,
  });
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT')
    return `timed out after ${timeoutMs} ms`;
  if (e?.code === 'UND_ERR_CONNECT_TIMEOUT') return `connect timed out after ${timeoutMs} ms`;
  const code = e?.code ?? e?.cause?.code;
  const message = (e?.message ?? String(err)).slice(0, 200);
  return code ? `${code}: ${message}` : message;
}
