// The app factory: builds the fastify app and never listens (tests use app.inject()). The shared things are plugins
// that decorate the instance (settings, database, observability, providers, rate limits, metering, cookies, sign-in,
// auth, the OpenAPI collector); each route folder is a plugin registered under its prefix.
import cookie from '@fastify/cookie';
import {
  clientErrorHandler,
  errors,
  frameworkErrors,
  MAX_PARAM_LENGTH,
  openapi,
  serializerCompiler,
  validatorCompiler,
} from '@scriptorium/http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import { badRequest } from './errors.ts';
import { createLogger } from './logger.ts';
import auth from './plugins/auth.ts';
import databasePlugin from './plugins/database.ts';
import metering from './plugins/metering.ts';
import observability from './plugins/observability.ts';
import providers from './plugins/providers.ts';
import rateLimits from './plugins/rate-limit.ts';
import settings from './plugins/settings.ts';
import signIn from './plugins/sign-in.ts';
import type { TranslationProvider } from './providers/index.ts';
import authRoutes from './routes/auth/index.ts';
import billingRoutes from './routes/billing/index.ts';
import healthRoutes from './routes/health/index.ts';
import opsRoutes from './routes/ops/index.ts';
import inviteRoutes from './routes/v1/invites/index.ts';
import judgeRoutes from './routes/v1/judge/index.ts';
import keyRoutes from './routes/v1/keys/index.ts';
import meRoutes from './routes/v1/me/index.ts';
import mfaRoutes from './routes/v1/mfa/index.ts';
import orgRoutes from './routes/v1/orgs/index.ts';
import playgroundRoutes from './routes/v1/playground/index.ts';
import privacyRoutes from './routes/v1/privacy/index.ts';
import reviewRoutes from './routes/v1/reviews/index.ts';
import translateRoutes from './routes/v1/translate/index.ts';
import webRoutes from './routes/web/index.ts';

export interface AppOptions {
  config: Config;
  /** The open database; its owner closes it. */
  database: Database;
  logger?: Logger;
  /** Replaces the provider the configuration names (tests wrap the real one). */
  provider?: TranslationProvider;
  now?: () => number;
  random?: () => number;
}

/** The route folders and the prefix each is registered under. */
const ROUTES = [
  [translateRoutes, '/api/v1/translate'],
  [judgeRoutes, '/api/v1/judge'],
  [playgroundRoutes, '/api/v1/playground'],
  [authRoutes, '/auth'],
  [meRoutes, '/api/v1/me'],
  [orgRoutes, '/api/v1/orgs'],
  [inviteRoutes, '/api/v1/invites'],
  [keyRoutes, '/api/v1/keys'],
  [reviewRoutes, '/api/v1/reviews'],
  [mfaRoutes, '/api/v1/mfa'],
  [privacyRoutes, '/api/v1/privacy'],
  [billingRoutes, '/api/billing'],
  [opsRoutes, '/api'],
  [webRoutes, ''],
  [healthRoutes, ''],
] as const;

/** A `\u0000` escape in JSON text that is not itself an escaped backslash followed by `u0000`. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

/**
 * PostgreSQL text cannot hold U+0000: a request that spells one (`%00` in its URL, `\u0000` in a JSON body) is 400
 * before any route reads it, instead of a database error (500) where it would be stored or looked up.
 */
function refuseNul(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (NUL_ESCAPE.test(body as string)) return done(badRequest('text must not contain U+0000'), undefined);
    return parseJson(request, body as string, done);
  });
  app.addHook('onRequest', async (request) => {
    if (/%00/i.test(request.url)) throw badRequest('the URL must not contain U+0000');
  });
}

/**
 * Builds the HTTP app.
 * @example const app = await buildApp({ config, database }); const res = await app.inject({ method: 'GET', url: '/healthz' });
 */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const { config } = opts;
  const app: FastifyInstance = Fastify({
    loggerInstance: (opts.logger ?? createLogger(config.logLevel)) as FastifyBaseLogger,
    // Our own one-line-per-request log (plugins/observability.ts) replaces fastify's two lines.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // A number is a hop count: trust that many proxies in front of the service.
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (
            (hops: number) => (_address: string, i: number) =>
              i < hops
          )(config.trustProxy)
        : config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    requestTimeout: 120_000,
    // A path parameter over the router's limit is 414, a malformed URL 400, a URL over Node's limit 431: `{error}`.
    frameworkErrors,
    clientErrorHandler,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Bodies are JSON only: anything else is 415.
  app.removeContentTypeParser('text/plain');
  refuseNul(app);

  await app.register(settings, {
    config,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.random ? { random: opts.random } : {}),
  });
  await app.register(errors);
  await app.register(observability);
  await app.register(databasePlugin, { database: opts.database });
  await app.register(providers, opts.provider ? { provider: opts.provider } : {});
  await app.register(rateLimits);
  await app.register(metering);
  await app.register(cookie);
  await app.register(signIn);
  await app.register(auth);
  await app.register(openapi);
  for (const [plugin, prefix] of ROUTES) await app.register(plugin, { prefix });
  await app.ready();
  return app;
}
