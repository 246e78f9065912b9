// `ledger-node witness`: the project's C2SP tlog-witness, what a broker operator runs to hold a ledger to account.
//   POST /add-checkpoint   the protocol (core.ts decides; an accepted checkpoint is on disk before the answer)
//   GET  /                 name, verifier key, each log's latest cosigned size and root
//   GET  /conflicts        the contradicting checkpoints it was shown (split views, forks): signed evidence
//   GET  /health, /metrics
// Requests are judged and persisted one at a time (the decision and the synchronous state write share one turn of
// the event loop), so two requests can never both pass the check against the same old size.
import {
  ALG_COSIGNATURE_V1,
  cosignatureLine,
  formatSizeResponse,
  formatVerifierKey,
  MAX_ADD_CHECKPOINT_BYTES,
  SIZE_CONTENT_TYPE,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { createSigner } from '@scriptorium/ledger-protocol/keys';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import pino, { type Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { createRateLimiter } from '../api/rate-limit.ts';
import type { WitnessConfig } from './config.ts';
import { decide, followedLogs } from './core.ts';
import { WitnessState } from './state.ts';

export interface RunningWitness {
  app: FastifyInstance;
  url: string;
  verifierKey: string;
  close(): Promise<void>;
}

/** Requests per second per client address (a burst of twice that). */
const RATE = 50;

/** Builds the witness's app (never listens). */
export async function buildWitnessApp(
  config: WitnessConfig,
  state: WitnessState,
  logger: Logger,
  now: () => number = Date.now,
): Promise<{ app: FastifyInstance; verifierKey: string }> {
  const signer = createSigner(config.keys.privateKey);
  const verifierKey = formatVerifierKey(config.name, ALG_COSIGNATURE_V1, signer.publicKey);
  const logs = followedLogs(config.logs);
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: 'scriptorium_witness_requests_total',
    help: 'add-checkpoint requests, by answer status',
    labelNames: ['status'],
    registers,
  });
  const conflicts = new Counter({
    name: 'scriptorium_witness_conflicts_total',
    help: 'Validly signed checkpoints that contradict what this witness cosigned (split views, forks), by log',
    labelNames: ['origin'],
    registers,
  });
  new Gauge({
    name: 'scriptorium_witness_cosigned_size',
    help: 'Size of the latest checkpoint cosigned, by log',
    labelNames: ['origin'],
    registers,
    collect() {
      for (const h of state.heads()) this.set({ origin: h.origin }, h.size);
    },
  });
  const limiter = createRateLimiter(RATE, 2 * RATE);
  const options: FastifyServerOptions = {
    loggerInstance: logger.child({ name: 'witness.http' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_ADD_CHECKPOINT_BYTES,
  };
  const app = Fastify(options);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.addHook('onRequest', async (request, reply) => {
    if (!limiter.take(request.ip))
      return reply.status(429).header('retry-after', '1').type('text/plain').send('rate limit exceeded\n');
  });
  app.setErrorHandler((error, _request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    const code = typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
    return reply
      .status(code)
      .type('text/plain')
      .send(code === 413 ? 'request too large\n' : 'malformed request\n');
  });

  app.post('/add-checkpoint', async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const decision = decide(body, logs, (origin) => state.head(origin), verifySignature);
    requests.inc({ status: String(decision.status) });
    if (decision.status === 200) {
      const seconds = Math.floor(now() / 1000);
      if (!decision.unchanged) {
        state.advance(decision.origin, decision.size, decision.root, seconds);
        logger.info(
          { origin: decision.origin, old: decision.oldSize, size: decision.size, proof: decision.proofLength },
          'cosigned',
        );
      }
      const line = cosignatureLine(config.name, signer.publicKey, (m) => signer.sign(m), decision.text, seconds);
      return reply.type('text/plain; charset=utf-8').send(line);
    }
    if ('knownSize' in decision)
      return reply.status(409).type(SIZE_CONTENT_TYPE).send(formatSizeResponse(decision.knownSize));
    if (decision.conflict) {
      const c = decision.conflict;
      conflicts.inc({ origin: c.origin });
      state.recordConflict({
        at: now(),
        origin: c.origin,
        size: c.size,
        known_size: c.knownSize,
        known_root: c.knownRoot,
        reason: decision.message,
        note: c.note,
      });
      logger.warn(
        { origin: c.origin, size: c.size, known_size: c.knownSize },
        `contradicting checkpoint refused: ${decision.message}`,
      );
    }
    return reply.status(decision.status).type('text/plain; charset=utf-8').send(`${decision.message}\n`);
  });

  app.get('/', async () => ({
    name: config.name,
    verifier_key: verifierKey,
    logs: state.heads().map((h) => ({ origin: h.origin, size: h.size, root: h.root, cosigned_at: h.cosignedAt })),
    conflicts: state.conflicts.length,
  }));
  app.get('/conflicts', async () => ({ conflicts: state.conflicts }));
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  return { app, verifierKey };
}

/** Starts the witness on its configured address. */
export async function startWitness(
  config: WitnessConfig,
  logger: Logger = pino({ level: config.logLevel }),
): Promise<RunningWitness> {
  const state = WitnessState.open(config.stateFile);
  const { app, verifierKey } = await buildWitnessApp(config, state, logger);
  await app.listen({ host: config.bindHost, port: config.bindPort });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.bindPort;
  const host = config.bindHost === '0.0.0.0' || config.bindHost === '::' ? '127.0.0.1' : config.bindHost;
  logger.info(
    { name: config.name, verifier_key: verifierKey, port, logs: config.logs.map((l) => l.origin) },
    'witness started',
  );
  return { app, url: `http://${host}:${port}`, verifierKey, close: () => app.close() };
}

/** Runs until SIGTERM/SIGINT. */
export async function runWitness(config: WitnessConfig): Promise<void> {
  const logger = pino({ level: config.logLevel });
  const running = await startWitness(config, logger);
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
