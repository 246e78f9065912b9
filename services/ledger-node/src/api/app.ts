// The node's fastify app. A factory: it builds the app and never listens (server.ts does).
// Cross-cutting rules, in order: rate limit per source (429) → bearer token and, in mutual TLS,
// a verified client certificate on the protected routes (401) → body limit (413) → zod (400).
// Every error body is {error: string} (the shared HTTP layer, @scriptorium/http: route specs with zod schemas, the
// error plugin, 405 with Allow, 414). GET /openapi.json describes the routes. Accesses to protected routes go to the
// `node.audit` logger.
import type { TLSSocket } from 'node:tls';
import {
  clientErrorHandler,
  errors,
  frameworkErrors,
  MAX_PARAM_LENGTH,
  type OpenApiInfo,
  openapi,
  serializerCompiler,
  serveOpenApi,
  validatorCompiler,
} from '@scriptorium/http';
import type { AssetStore } from '@scriptorium/web-build';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { TlsConfig } from '../config.ts';
import { NodeError } from '../errors.ts';
import type { NodeMetrics } from '../metrics.ts';
import { createTokenCheck } from './auth.ts';
import { createRateLimiter } from './rate-limit.ts';
import { adminRoutes } from './routes/admin.ts';
import { type CheckpointService, checkpointRoutes } from './routes/checkpoint.ts';
import { peerRoutes } from './routes/peer.ts';
import { readRoutes } from './routes/read.ts';
import { uiRoutes } from './routes/ui.ts';
import { type WatchService, watchRoutes } from './routes/watch.ts';
import { r413 } from './schemas.ts';
import type { LedgerService } from './service.ts';

export interface AppOptions {
  service: LedgerService;
  metrics: NodeMetrics;
  logger: Logger;
  clusterToken: string | undefined;
  debugApi: boolean;
  maxBodyBytes: number;
  rateLimit: { rps: number; burst: number };
  tls?: TlsConfig | undefined;
  /** The integrity watch (GET /watch, GET /notifications/{id}); absent in tests of the core API. */
  watch?: WatchService | undefined;
  /** The built browser console served at /ui; undefined when it was not built. */
  consoleAssets?: AssetStore | undefined;
  /** Checkpoints and witnessing (GET /checkpoint…, POST /checkpoint/…); absent in tests of the core API. */
  checkpoints?: CheckpointService | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on protected routes. */
    authenticated?: boolean;
  }
  interface FastifyContextConfig {
    /** Route needs the cluster token (mutating endpoints, GET /peers, /admin/*). */
    protected?: boolean;
    /** An open read the browser console fetches from other nodes' pages: answered with CORS headers for GET. */
    cors?: boolean;
    /**
     * A route that authenticates its callers itself (brokers' notifications, by each subscription's secret): a
     * request is refused while its source's bucket is empty, and only refused ones (401) take from it, so that a
     * broker's burst of genuine notifications is never throttled.
     */
    selfAuthenticated?: boolean;
  }
}

/** The statuses of fastify's own client errors the node's document declares; any other one is a malformed payload. */
const clientStatus = (status: number) => ([404, 413, 429].includes(status) ? status : 400);
const clientMessage = (status: number, error: FastifyError) => {
  if (status === 413) return 'payload above MAX_BODY_BYTES';
  if (status === 404) return 'not found';
  return error.code === 'FST_ERR_VALIDATION' ? `malformed payload: ${error.message}` : 'malformed payload';
};

/** The version of the node's HTTP API (the node architecture v2, spec section 9). */
export const NODE_API_VERSION = '2.0.0';

const OPENAPI_INFO: OpenApiInfo = {
  title: 'Scriptorium integrity ledger node',
  version: NODE_API_VERSION,
  description:
    'One validator of a permissioned integrity ledger (BFT consensus). Open reads: health, chain status, blocks, ' +
    'Merkle proofs, light evidence, the console’s peer list and the watch; peer-to-peer and admin endpoints take ' +
    'the cluster token. Every error body is {error: string}.',
  // A body above MAX_BODY_BYTES, on every route that takes one (any other unparsable body is a malformed payload, 400).
  bodyResponses: { 413: r413 },
  securitySchemes: {
    clusterToken: {
      type: 'http',
      scheme: 'bearer',
      description:
        'Authorization: Bearer <CLUSTER_TOKEN> (NODE_CLUSTER_TOKEN; none needed when no token is configured). In ' +
        'mutual TLS, a client certificate verified against the cluster CA too.',
    },
    notifyToken: {
      type: 'apiKey',
      in: 'header',
      name: 'Scriptorium-Notify-Token',
      description: 'A broker subscription’s secret (subscribe mode), one per channel (docs/ledger-watch.md)',
    },
  },
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { service, metrics, logger } = options;
  const audit = logger.child({ name: 'node.audit' });
  const tokenCheck = createTokenCheck(options.clusterToken);
  const limiter = createRateLimiter(options.rateLimit.rps, options.rateLimit.burst);
  const mutualTls = options.tls?.mode === 'mutual';

  const fastifyOptions: FastifyServerOptions & { https?: object } = {
    loggerInstance: logger.child({ name: 'node.http' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.maxBodyBytes,
    // Peer specs and record ids are short; deep or huge JSON is refused by the limits above.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // A path parameter over the router's limit is 414, a malformed URL 400, a URL over Node's limit 431: `{error}`.
    frameworkErrors,
    clientErrorHandler,
  };
  if (options.tls) {
    fastifyOptions.https = {
      cert: options.tls.cert,
      key: options.tls.key,
      ...(options.tls.ca ? { ca: options.tls.ca } : {}),
      // Mutual TLS: ask every client for a certificate; protected routes require a verified one,
      // read endpoints stay open (spec section 5, rule 3) so probes and the console need no cert.
      requestCert: mutualTls,
      rejectUnauthorized: false,
    };
  }
  const app = Fastify(fastifyOptions as FastifyServerOptions);

  app.addHook('onRequest', async (request, reply) => {
    // Open reads other nodes' console pages fetch: readable across origins, errors (404, 429) included. They carry
    // no credentials and change nothing, so any origin may read them.
    if (request.routeOptions.config.cors && request.method === 'GET') reply.header('access-control-allow-origin', '*');
    const selfAuthenticated = request.routeOptions.config.selfAuthenticated === true;
    if (!(selfAuthenticated ? limiter.peek(request.ip) : limiter.take(request.ip))) {
      reply.header('retry-after', '1');
      throw new NodeError('rate_limited', 'rate limit exceeded');
    }
    if (request.routeOptions.config.protected) {
      const certOk = !mutualTls || (request.raw.socket as TLSSocket).authorized === true;
      request.authenticated = certOk && tokenCheck.check(request.headers.authorization);
      if (!request.authenticated) {
        throw new NodeError(
          'unauthorized',
          certOk ? 'token missing or invalid' : 'client certificate missing or not verified',
        );
      }
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    if (request.routeOptions.config.selfAuthenticated && reply.statusCode === 401) limiter.take(request.ip);
    if (request.routeOptions.config.protected) {
      audit.info(
        {
          method: request.method,
          path: request.routeOptions.url ?? request.url.split('?')[0],
          client: request.ip,
          authenticated: request.authenticated === true,
          status: reply.statusCode,
        },
        'access',
      );
    }
  });

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(errors, { clientStatus, clientMessage, quietCodes: ['queue_full'] });
  await app.register(openapi);

  await app.register(readRoutes, { service, metrics });
  await app.register(peerRoutes, { service });
  await app.register(uiRoutes, { service, assets: options.consoleAssets });
  if (options.debugApi) await app.register(adminRoutes, { service });
  if (options.watch) await app.register(watchRoutes, { watch: options.watch });
  if (options.checkpoints) await app.register(checkpointRoutes, { checkpoints: options.checkpoints });
  serveOpenApi(app, '/openapi.json', OPENAPI_INFO, ['read']);
  return app;
}
