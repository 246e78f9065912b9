// Reads a node's open read API for the backup commands: GET /chain and GET /blocks/{h}. Blocks are fetched a few
// at a time ahead of the one being used, so a backup is one client among others to the node, never a load that
// competes with consensus: at most `ahead` requests in flight.
import { Agent, request } from 'undici';

export interface ChainTip {
  height: number;
  latestHash: string;
}

export class NodeReader {
  readonly url: string;
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(url: string, options: { ca?: Buffer; timeoutMs?: number } = {}) {
    this.url = url.replace(/\/$/, '');
    this.#agent = new Agent({ connections: 8, connect: options.ca ? { ca: options.ca } : {} });
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  async #get(path: string): Promise<string> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${this.url}${path}`, {
        dispatcher: this.#agent,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
    } catch (err) {
      throw new Error(`node ${this.url}: GET ${path}: ${(err as Error).message}`);
    }
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`node ${this.url}: GET ${path}: ${res.statusCode}`);
    return text;
  }

  async chain(): Promise<ChainTip> {
    const body = JSON.parse(await this.#get('/chain')) as { height?: unknown; latest_hash?: unknown };
    if (typeof body.height !== 'number' || typeof body.latest_hash !== 'string')
      throw new Error(`node ${this.url}: GET /chain: not a chain status`);
    return { height: body.height, latestHash: body.latest_hash };
  }

  /** The block at `height`, parsed (any JSON: the caller checks it). */
  async block(height: number): Promise<unknown> {
    return JSON.parse(await this.#get(`/blocks/${height}`));
  }

  /** Blocks `from`..`to` in order, with up to `ahead` requests in flight. */
  async *blocks(from: number, to: number, ahead = 4): AsyncGenerator<unknown> {
    const inFlight: Array<Promise<unknown>> = [];
    let next = from;
    const fill = () => {
      while (next <= to && inFlight.length < ahead) inFlight.push(this.block(next++));
    };
    fill();
    while (inFlight.length > 0) {
      const block = await (inFlight.shift() as Promise<unknown>);
      fill();
      yield block;
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
