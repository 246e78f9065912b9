// The app factory: builds the fastify app on a context and never listens (tests use app.inject()).
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { RouteRegistry } from './http/route-spec.ts';
import { serializerCompiler, validatorCompiler } from './http/zod-compilers.ts';
import errorsPlugin from './plugins/errors.ts';
import observability from './plugins/observability.ts';
import { healthRoutes } from './routes/health/index.ts';
import { opsRoutes } from './routes/ops/index.ts';
import { judgeRoutes } from './routes/v1/judge/index.ts';
import { playgroundRoutes } from './routes/v1/playground/index.ts';
import { translateRoutes } from './routes/v1/translate/index.ts';
import { webRoutes } from './routes/web/index.ts';
import type { AppContext } from './services/context.ts';

export interface BuiltApp {
  app: FastifyInstance;
  registry: RouteRegistry;
}

/**
 * Builds the HTTP app.
 * @example const { app } = await buildApp(ctx); const res = await app.inject({ method: 'GET', url: '/healthz' });
 */
export async function buildApp(ctx: AppContext): Promise<BuiltApp> {
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // Our own one-line-per-request log (plugins/observability.ts) replaces fastify's two lines.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // A number is a hop count: trust that many proxies in front of the service.
    trustProxy:
      typeof ctx.config.trustProxy === 'number'
        ? (
            (hops: number) => (_address: string, i: number) =>
              i < hops
          )(ctx.config.trustProxy)
        : ctx.config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    requestTimeout: 120_000,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Bodies are JSON only: anything else is 415.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('principal', null);

  await app.register(errorsPlugin);
  await app.register(observability, { metrics: ctx.metrics });

  const registry: RouteRegistry = { specs: [] };
  translateRoutes(app, registry, ctx);
  judgeRoutes(app, registry, ctx);
  playgroundRoutes(app, registry, ctx);
  opsRoutes(app, registry, ctx);
  webRoutes(app, registry, ctx);
  healthRoutes(app, registry, ctx);
  await app.ready();
  return { app, registry };
}
