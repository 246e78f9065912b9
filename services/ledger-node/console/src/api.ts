// Reading the ledger's open endpoints from the browser: the node serving the page (same origin) and its siblings
// (across origins; their read endpoints send CORS headers). Every answer is checked against the protocol's schemas:
// a node is a source of bytes, never of verdicts.
import { Block, ChainStatus, ConsolePeersBody, MerkleProofBody } from '@scriptorium/ledger-protocol';
import * as z from 'zod';

export class FetchError extends Error {}

/** A node's read API at `base` ('' for the node serving the page). */
export class NodeApi {
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  async get<T extends z.ZodType>(path: string, schema: T, timeoutMs = 8000): Promise<z.infer<T>> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, { signal: AbortSignal.timeout(timeoutMs), cache: 'no-store' });
    } catch (err) {
      throw new FetchError(`${path}: ${(err as Error).name === 'TimeoutError' ? 'no answer in time' : 'unreachable'}`);
    }
    if (res.status === 404) throw new FetchError(`${path}: not found`);
    if (!res.ok) throw new FetchError(`${path}: HTTP ${res.status}`);
    const parsed = schema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) throw new FetchError(`${path}: not the protocol's shape (${parsed.error.issues[0]?.message})`);
    return parsed.data;
  }

  chain(timeoutMs?: number) {
    return this.get('/chain', ChainStatus, timeoutMs);
  }

  peers(timeoutMs?: number) {
    return this.get('/ui/peers', ConsolePeersBody, timeoutMs);
  }

  block(height: number) {
    return this.get(`/blocks/${height}`, Block);
  }

  proof(height: number, index: number) {
    return this.get(`/proof/${height}/${index}`, MerkleProofBody);
  }

  /** GET /evidence as served: its shape is judged by the verifier, which says what is wrong with it. */
  evidence(height: number, index: number) {
    return this.get(`/evidence/${height}/${index}`, z.unknown());
  }
}

/** The node serving the page. */
export const home = new NodeApi('');

/** The base URL of a sibling node at `host:port`, in the page's own scheme (a cluster uses one scheme). */
export function siblingBase(address: string): string {
  return `${location.protocol}//${address}`;
}

/** Blocks of the serving node, fetched once each (a finalized block never changes). */
const blocks = new Map<number, Block>();

export async function blockAt(height: number): Promise<Block> {
  const cached = blocks.get(height);
  if (cached) return cached;
  const block = await home.block(height);
  if (block.header.height !== height)
    throw new FetchError(`/blocks/${height}: a block of height ${block.header.height}`);
  blocks.set(height, block);
  return block;
}
