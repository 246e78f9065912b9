// The chain as a transparency log (C2SP tlog-checkpoint, tlog-witness; docs/ledger-node.md):
//   GET /checkpoint (open read): the latest checkpoint the witness policy is met by (else the latest this node has),
//     a signed note as text/plain: log signatures of a quorum of validators, the witnesses' cosignatures.
//   GET /checkpoint/proof?height=H[&size=N] (open): RFC 6962 audit path of block H's hash, leaf H of the tree of
//     size N (default: the served checkpoint's size), hex, leaf upwards.
//   GET /checkpoint/proof?from=M&to=N (open): RFC 6962 consistency proof between the trees of sizes M and N.
//   GET /checkpoint/witnesses (open): what each witness last cosigned, and whether the policy is met (the operator).
//   POST /checkpoint/sign {size} (peer, token): this validator's signature line on its checkpoint of that size.
//   POST /checkpoint/cosigned {note} (peer, token): a checkpoint a peer had witnessed; 409 when its root is not this
//     node's at that size (a split view).
import { CheckpointSignBody, CosignedCheckpointBody, type WitnessStatusBody } from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { parseOr400 } from '../validate.ts';

export interface CheckpointService {
  /** The note served at GET /checkpoint; undefined before the first one. */
  current(): string | undefined;
  inclusion(
    height: number,
    size: number | undefined,
  ): { height: number; size: number; block_hash: string; proof: string[] };
  consistency(from: number, to: number): { from: number; to: number; proof: string[] };
  witnessStatus(): WitnessStatusBody;
  sign(size: number): Promise<{ line: string }>;
  receive(note: string): { status: string; size?: number };
}

const count = z
  .string()
  .regex(/^\d{1,15}$/, { message: 'expected a whole number' })
  .transform(Number);
const proofQuery = z.union([
  z.strictObject({ height: count, size: count.optional() }),
  z.strictObject({ from: count, to: count }),
]);

export const checkpointRoutes: FastifyPluginAsync<{ checkpoints: CheckpointService }> = async (
  app,
  { checkpoints },
) => {
  const cors = { config: { cors: true } };

  app.get('/checkpoint', cors, async (_request, reply) => {
    const note = checkpoints.current();
    if (note === undefined) return reply.status(404).send({ error: 'no checkpoint yet' });
    return reply.type('text/plain; charset=utf-8').send(note);
  });

  app.get('/checkpoint/proof', cors, async (request) => {
    const query = parseOr400(proofQuery, request.query);
    return 'height' in query
      ? checkpoints.inclusion(query.height, query.size)
      : checkpoints.consistency(query.from, query.to);
  });

  app.get('/checkpoint/witnesses', cors, async () => checkpoints.witnessStatus());

  app.post('/checkpoint/sign', { config: { protected: true } }, async (request) => {
    const { size } = parseOr400(CheckpointSignBody, request.body);
    return checkpoints.sign(size);
  });

  app.post('/checkpoint/cosigned', { config: { protected: true } }, async (request) => {
    const { note } = parseOr400(CosignedCheckpointBody, request.body);
    return checkpoints.receive(note);
  });
};
