// Open read endpoints: /health, /ready, /chain, /blocks/{index}, /proof/{height}/{index},
// /evidence/{height}/{index}, /metrics.
import { route } from '@scriptorium/http';
import { Block, ChainStatus, HealthBody, LightEvidence, MerkleProofBody } from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import { notFound } from '../../errors.ts';
import type { NodeMetrics } from '../../metrics.ts';
import { heightParam, proofParams, ReadyBody, r400, r404, r429 } from '../schemas.ts';
import type { LedgerService } from '../service.ts';

export const readRoutes: FastifyPluginAsync<{ service: LedgerService; metrics: NodeMetrics }> = async (
  app,
  { service, metrics },
) => {
  // The open reads the browser console fetches across origins send CORS headers (`cors` in app.ts).
  const cors = { config: { cors: true } };

  route(
    app,
    {
      method: 'GET',
      url: '/health',
      operationId: 'health',
      summary: 'Liveness',
      tags: ['read'],
      security: 'none',
      responses: { 200: { description: 'alive', schema: HealthBody }, 429: r429 },
    },
    cors,
    async () => ({ status: 'ok' }),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/ready',
      operationId: 'ready',
      summary: 'Readiness: synced within one block of the best peer',
      tags: ['read'],
      security: 'none',
      internal: true,
      responses: {
        200: { description: 'ready', schema: ReadyBody },
        429: r429,
        503: { description: 'not synced', schema: ReadyBody },
      },
    },
    {},
    async (_request, reply) => {
      const r = service.readiness();
      return reply
        .status(r.ready ? 200 : 503)
        .send(r.ready ? { status: 'ready', ...r } : { error: 'not synced', ...r });
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/chain',
      operationId: 'chainStatus',
      summary: 'Chain status: height, latest hash, the active validator set and its quorum',
      tags: ['read'],
      security: 'none',
      responses: { 200: { description: 'chain status', schema: ChainStatus }, 429: r429 },
    },
    cors,
    async () => service.chainStatus(),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/blocks/:index',
      operationId: 'getBlock',
      summary: 'A finalized block with its finality certificate (also used for catch-up sync)',
      tags: ['read'],
      security: 'none',
      params: heightParam,
      responses: {
        200: { description: 'the block', schema: Block },
        400: { ...r400, description: 'not a block index' },
        404: { ...r404, description: 'no block at this height' },
        429: r429,
      },
    },
    cors,
    async (request, reply) => {
      const { index } = request.params;
      // The stored text as it is: a 2000-record block is not parsed and serialized again for each reader.
      const json = service.getBlockJson?.(index);
      if (json !== undefined) return reply.type('application/json; charset=utf-8').send(json);
      const block = service.getBlock(index);
      if (block === undefined) throw notFound(`block ${index} does not exist`);
      return block;
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/proof/:height/:index',
      operationId: 'getProof',
      summary: 'The Merkle proof of one record of a block (verifies offline against the block’s merkle_root)',
      tags: ['read'],
      security: 'none',
      params: proofParams,
      responses: {
        200: { description: 'the proof', schema: MerkleProofBody },
        400: { ...r400, description: 'not a height or an index' },
        404: r404,
        429: r429,
      },
    },
    cors,
    async (request) => {
      const { height, index } = request.params;
      const proof = service.getProof(height, index);
      if (proof === undefined) throw notFound(`no record ${index} in block ${height}`);
      return proof;
    },
  );

  // Light evidence: the record final, verifiable offline from the genesis block alone (ledger-protocol's
  // verifyLightEvidence); 404 exactly where /proof answers 404.
  route(
    app,
    {
      method: 'GET',
      url: '/evidence/:height/:index',
      operationId: 'getEvidence',
      summary: 'Light evidence of one record: verifiable offline from the genesis block alone',
      tags: ['read'],
      security: 'none',
      params: proofParams,
      responses: {
        200: { description: 'the evidence', schema: LightEvidence },
        400: { ...r400, description: 'not a height or an index' },
        404: r404,
        429: r429,
      },
    },
    cors,
    async (request) => {
      const { height, index } = request.params;
      const evidence = service.getEvidence(height, index);
      if (evidence === undefined) throw notFound(`no record ${index} in block ${height}`);
      return evidence;
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/metrics',
      operationId: 'metrics',
      summary: 'Metrics in the Prometheus text exposition format (names prefixed scriptorium_ledger_)',
      tags: ['read'],
      security: 'none',
      responses: {
        200: { description: 'metrics in the text exposition format', contentType: 'text/plain' },
        429: r429,
      },
    },
    {},
    async (_request, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    },
  );
};
