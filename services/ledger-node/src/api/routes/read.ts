// Open read endpoints: /health, /ready, /chain, /blocks/{index}, /proof/{height}/{index},
// /evidence/{height}/{index}, /metrics.
import type { FastifyPluginAsync } from 'fastify';
import { notFound } from '../../errors.ts';
import type { NodeMetrics } from '../../metrics.ts';
import { heightParam, proofParams } from '../schemas.ts';
import type { LedgerService } from '../service.ts';
import { parseOr400 } from '../validate.ts';

export const readRoutes: FastifyPluginAsync<{ service: LedgerService; metrics: NodeMetrics }> = async (
  app,
  { service, metrics },
) => {
  // The open reads the browser console fetches across origins send CORS headers (`cors` in app.ts).
  const cors = { config: { cors: true } };

  app.get('/health', cors, async () => ({ status: 'ok' }));

  app.get('/ready', async (_request, reply) => {
    const r = service.readiness();
    return reply.status(r.ready ? 200 : 503).send(r.ready ? { status: 'ready', ...r } : { error: 'not synced', ...r });
  });

  app.get('/chain', cors, async () => service.chainStatus());

  app.get('/blocks/:index', cors, async (request, reply) => {
    const { index } = parseOr400(heightParam, request.params);
    // The stored text as it is: a 2000-record block is not parsed and serialized again for each reader.
    const json = service.getBlockJson?.(index);
    if (json !== undefined) return reply.type('application/json; charset=utf-8').send(json);
    const block = service.getBlock(index);
    if (block === undefined) throw notFound(`block ${index} does not exist`);
    return block;
  });

  app.get('/proof/:height/:index', cors, async (request) => {
    const { height, index } = parseOr400(proofParams, request.params);
    const proof = service.getProof(height, index);
    if (proof === undefined) throw notFound(`no record ${index} in block ${height}`);
    return proof;
  });

  // Light evidence: the record final, verifiable offline from the genesis block alone (ledger-protocol's
  // verifyLightEvidence); 404 exactly where /proof answers 404.
  app.get('/evidence/:height/:index', cors, async (request) => {
    const { height, index } = parseOr400(proofParams, request.params);
    const evidence = service.getEvidence(height, index);
    if (evidence === undefined) throw notFound(`no record ${index} in block ${height}`);
    return evidence;
  });

  app.get('/metrics', async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
};
