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
import { ErrorBody, route } from '@scriptorium/http';
import {
  CheckpointSignatureBody,
  CheckpointSignBody,
  CosignedCheckpointBody,
  HashHex,
  Height,
  WitnessStatusBody,
} from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { r400, r401, r404, r413, r429 } from '../schemas.ts';

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

const count = (description: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, { message: 'expected a whole number' })
    .meta({ description })
    .transform(Number);
/** Either `height` (and `size`), or `from` and `to`: an inclusion or a consistency proof. */
const proofQuery = z
  .strictObject({
    height: count('inclusion: the block whose hash is leaf `height`').optional(),
    size: count('inclusion: the tree size (default: the served checkpoint’s)').optional(),
    from: count('consistency: the smaller tree size').optional(),
    to: count('consistency: the larger tree size').optional(),
  })
  .refine(
    (q) =>
      q.height !== undefined
        ? q.from === undefined && q.to === undefined
        : q.from !== undefined && q.to !== undefined && q.size === undefined,
    { message: 'give height (and size), or from and to' },
  );
const HexHashes = z.array(HashHex).max(64).meta({ description: 'RFC 6962 hashes, hex, leaf upwards' });
const InclusionProof = z.object({ height: Height, size: Height, block_hash: HashHex, proof: HexHashes });
const ConsistencyProof = z.object({ from: Height, to: Height, proof: HexHashes });
const CosignedReceipt = z.object({
  status: z.enum(['kept', 'known', 'ahead']),
  size: Height.optional(),
});

export const checkpointRoutes: FastifyPluginAsync<{ checkpoints: CheckpointService }> = async (
  app,
  { checkpoints },
) => {
  const cors = { config: { cors: true } };
  const protectedRoute = { config: { protected: true } };

  route(
    app,
    {
      method: 'GET',
      url: '/checkpoint',
      operationId: 'checkpoint',
      summary: 'The latest checkpoint the witness policy is met by (else the latest this node has): a signed note',
      tags: ['read'],
      security: 'none',
      responses: {
        200: { description: 'a C2SP signed note', contentType: 'text/plain' },
        404: { description: 'no checkpoint yet', schema: ErrorBody },
        429: r429,
      },
    },
    cors,
    async (_request, reply) => {
      const note = checkpoints.current();
      if (note === undefined) return reply.status(404).send({ error: 'no checkpoint yet' });
      return reply.type('text/plain; charset=utf-8').send(note);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/checkpoint/proof',
      operationId: 'checkpointProof',
      summary: 'An RFC 6962 inclusion proof of a block (height[, size]) or a consistency proof (from, to)',
      tags: ['read'],
      security: 'none',
      querystring: proofQuery,
      responses: {
        200: { description: 'the proof', schema: z.union([InclusionProof, ConsistencyProof]) },
        400: r400,
        404: { ...r404, description: 'no tree of that size here, or no such block in it' },
        429: r429,
      },
    },
    cors,
    async (request) => {
      const { height, size, from, to } = request.query;
      return height !== undefined
        ? checkpoints.inclusion(height, size)
        : checkpoints.consistency(from as number, to as number);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/checkpoint/witnesses',
      operationId: 'checkpointWitnesses',
      summary: 'What each witness last cosigned, and whether the policy is met',
      tags: ['read'],
      security: 'none',
      responses: { 200: { description: 'the witness status', schema: WitnessStatusBody }, 429: r429 },
    },
    cors,
    async () => checkpoints.witnessStatus(),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/checkpoint/sign',
      operationId: 'checkpointSign',
      summary: 'This validator’s signature line on its own checkpoint of that size',
      tags: ['peer'],
      security: 'clusterToken',
      body: CheckpointSignBody,
      responses: {
        200: { description: 'the signature line', schema: CheckpointSignatureBody },
        400: r400,
        401: r401,
        404: { ...r404, description: 'this node has no block at size - 1 yet' },
        413: r413,
        429: r429,
      },
    },
    protectedRoute,
    async (request) => checkpoints.sign(request.body.size),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/checkpoint/cosigned',
      operationId: 'checkpointCosigned',
      summary: 'A checkpoint a peer had witnessed, checked against this node’s own chain before it is kept',
      tags: ['peer'],
      security: 'clusterToken',
      body: CosignedCheckpointBody,
      responses: {
        200: { description: 'kept, already known, or ahead of this node', schema: CosignedReceipt },
        400: { ...r400, description: 'not a checkpoint of this log, or its signatures do not verify' },
        401: r401,
        409: { description: 'its root is not this node’s at that size (a split view)', schema: ErrorBody },
        413: r413,
        429: r429,
      },
    },
    protectedRoute,
    async (request) => checkpoints.receive(request.body.note),
  );
};
