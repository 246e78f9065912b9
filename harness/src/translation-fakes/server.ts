import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Behaviour of a fake upstream; every field can be changed at run time with `set`. */
export interface FakeKnobs {
  /** Delay before answering, in ms (0 for benchmarks). */
  latencyMs: number;
  /** Answer every request with this status and the API's error body (e.g. 429, 500, 529). */
  failStatus: number | null;
  /** Seconds for the `retry-after` header sent with a 429/503/529 failStatus. */
  retryAfterSeconds: number | null;
  /** true or 'content': 200 with a reply text that is not the JSON asked for; 'body': a 200 body that is not JSON. */
  malformed: boolean | 'content' | 'body';
  /** Report these usage numbers instead of the honest counts. */
  usage: { tokensIn: number; tokensOut: number } | null;
  /** OpenAI fake only: leave `usage` out of the reply, as some OpenAI-compatible servers do. */
  omitUsage: boolean;
  /** Read the request, then destroy the socket without answering. */
  dropConnection: boolean;
  /** Leave the last N items out of a translate reply (missing ids). */
  omitItems: number;
  /** The key the fake accepts; null accepts any request without credentials (like a local Ollama or vLLM). */
  apiKey: string | null;
  /** How the fake translates: 'pseudo-light' (brackets, padding, glossary; default) or 'pseudo' (also accents). */
  transform: 'pseudo-light' | 'pseudo';
  /**
   * The next N translate replies are wrong in a way the validators catch (each item loses its first placeholder or
   * tag, else its neverTranslate term is lower-cased, else it comes back empty); then replies are correct again.
   * Counts down by one per translate reply.
   */
  invalidReplies: number;
}

/** The key the fakes accept unless told otherwise. */
export const FAKE_API_KEY = 'sk-fake-test-0000000000000000';

export const DEFAULT_KNOBS: FakeKnobs = {
  latencyMs: 0,
  failStatus: null,
  retryAfterSeconds: null,
  malformed: false,
  usage: null,
  omitUsage: false,
  dropConnection: false,
  omitItems: 0,
  apiKey: FAKE_API_KEY,
  transform: 'pseudo-light',
  invalidReplies: 0,
};

export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

export interface FakeUpstream {
  /** Base URL to give the provider as `baseUrl`. */
  readonly url: string;
  /** Requests received so far (all of them, failed ones included). */
  readonly requestCount: number;
  /** The last request received, or null. */
  readonly lastRequest: SeenRequest | null;
  set(knobs: Partial<FakeKnobs>): void;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Shared state a handler may use. */
export interface HandlerContext {
  /** True (and counts `invalidReplies` down) when this translate reply must be invalid. */
  takeInvalidReply(): boolean;
}

/** Fake-specific handling of one request whose body has been read. */
export type Handler = (req: SeenRequest, knobs: FakeKnobs, ctx: HandlerContext) => Reply;

/** Request bodies above this get 413, as real APIs do. */
const MAX_BODY = 32 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) resolve(null);
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * A real `node:http` server on 127.0.0.1 and a free port chosen by the OS, running `handler` for every request,
 * with the common knobs (latency, drop connection, malformed body) applied around it.
 */
/** Text of a message `content`: a string, or an array of `{type: 'text', text}` blocks (both APIs accept either). */
export function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.map((p: { type?: unknown; text?: unknown }) =>
      p && p.type === 'text' && typeof p.text === 'string' ? p.text : undefined,
    );
    return parts.every((p) => p !== undefined) ? parts.join('') : undefined;
  }
  return undefined;
}

export async function startFake(
  basePath: string,
  handler: Handler,
  knobs: Partial<FakeKnobs>,
  tooLarge: () => Reply,
): Promise<FakeUpstream> {
  const state: FakeKnobs = { ...DEFAULT_KNOBS, ...knobs };
  let count = 0;
  let last: SeenRequest | null = null;
  const timers = new Set<NodeJS.Timeout>();
  const ctx: HandlerContext = {
    takeInvalidReply() {
      if (state.invalidReplies <= 0) return false;
      state.invalidReplies--;
      return true;
    },
  };

  const send = (res: ServerResponse, reply: Reply) => {
    if (res.destroyed) return;
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...reply.headers,
    });
    res.end(text);
  };

  const server = createServer(async (req, res) => {
    count++;
    let raw: string | null;
    try {
      raw = await readBody(req);
    } catch {
      res.destroy();
      return;
    }
    let body: unknown = raw;
    try {
      body = raw === null ? null : JSON.parse(raw);
    } catch {
      // keep the raw text: the handler answers 400
    }
    const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body };
    last = seen;
    const knobsNow = { ...state };
    const answer = () => {
      if (knobsNow.dropConnection) {
        req.socket.destroy();
        return;
      }
      if (raw === null) return send(res, tooLarge());
      const reply = handler(seen, knobsNow, ctx);
      if (reply.status === 200 && knobsNow.malformed === 'body') {
        return send(res, { status: 200, body: '<html>502 Bad Gateway</html>' });
      }
      send(res, reply);
    };
    if (knobsNow.latencyMs > 0) {
      const t = setTimeout(() => {
        timers.delete(t);
        answer();
      }, knobsNow.latencyMs);
      timers.add(t);
    } else answer();
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    get requestCount() {
      return count;
    },
    get lastRequest() {
      return last;
    },
    set(k: Partial<FakeKnobs>) {
      Object.assign(state, k);
    },
    close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
