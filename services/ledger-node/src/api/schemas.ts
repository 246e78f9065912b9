// Route parameters, query strings and the answers only the node gives. The bodies other parts send or read are the
// protocol's (@scriptorium/ledger-protocol bodies.ts); records, blocks and consensus messages are checked by the
// mempool, the chain and the consensus gate inside the service.
import { DUPLICATE_IDS, ErrorBody, hasUniqueIds, type ResponseSpec, UNIQUE_IDS } from '@scriptorium/http';
import { Height, MempoolBody } from '@scriptorium/ledger-protocol';
import { z } from 'zod';

/** A decimal path parameter (a height or an index): its description and examples sit on the string it is sent as. */
const decimal = (what: string, description: string, examples: string[]) =>
  z
    .string()
    .regex(/^\d{1,15}$/, { message: `expected ${what}` })
    .meta({ description, examples })
    .transform(Number);

export const heightParam = z.object({ index: decimal('a block index', 'the block height', ['0', '1']) });
export const proofParams = z.object({
  height: decimal('a height', 'the block height', ['1']),
  index: decimal('a record index', 'the index in the block’s records', ['0']),
});
export const submitQuery = z.object({
  count: z
    .string()
    .regex(/^\d{1,6}$/, { message: 'expected an integer 1..100000' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(100_000))
    .default(1),
});

/** POST /mempool: the protocol's body, its records' ids unique within the request (the rule of both APIs' batches). */
export const MempoolRequest = MempoolBody.extend({
  records: MempoolBody.shape.records.refine(hasUniqueIds, { message: DUPLICATE_IDS }).meta({ description: UNIQUE_IDS }),
});

/**
 * POST /consensus and POST /block: any JSON, checked by the node itself (the consensus gate, with its own refusal
 * reasons and their counter; the chain), not by the route.
 */
export const CheckedByNode = z.unknown();

/** POST /consensus: the message is in the inbound queue. */
export const QueuedBody = z.object({ status: z.literal('queued') });
/** POST /block: what the node did with the pushed block. */
export const BlockReceipt = z.object({ height: Height, status: z.enum(['applied', 'known', 'ahead']) });
/** POST /peers: how many specs were new, and how many moved an existing key to a new address. */
export const PeersMerged = z.object({ added: z.int().min(0), updated: z.int().min(0) });
/** GET /ready's `sync`: what pull sync is doing, so a node that stays behind shows where (node/sync.ts). */
export const SyncStateBody = z.object({
  phase: z.enum(['idle', 'polling', 'pulling']),
  phase_ms: z.number().min(0),
  passes: z.int().min(0),
  peers_asked: z.int().min(0),
  peers_answered: z.int().min(0),
  blocks_in_flight: z.int().min(0),
  last_pass: z.enum(['caught_up', 'no_answer', 'partial', 'block_unserved']).nullable(),
});
/** GET /ready: synced within one block of the best peer (200), or not (503, with `error`). */
export const ReadyBody = z.object({
  status: z.literal('ready').optional(),
  error: z.string().optional(),
  ready: z.boolean(),
  height: Height,
  best_peer_height: Height,
  sync: SyncStateBody,
});

const error = (description: string): ResponseSpec => ({ description, schema: ErrorBody });
export const r400 = error('malformed payload');
export const r401 = error('token missing or invalid (or, in mutual TLS, no verified client certificate)');
export const r404 = error('block or record does not exist');
export const r413 = error('payload above MAX_BODY_BYTES');
export const r429: ResponseSpec = {
  description: 'rate limit exceeded (per request source)',
  schema: ErrorBody,
  headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } },
};
export const r503 = error('inbound queue full (backpressure)');
