// Every error answer is `{error: string}`: the service's own errors (HttpError), fastify's 400/404/413/415,
// unexpected 500s, and a known path asked with a method it does not have (405 with Allow, as HTTP says).
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { HttpError } from './errors.ts';

export interface ErrorPluginOptions {
  /**
   * The status the API answers for one of fastify's own client errors (4xx): the identity by default; a service
   * whose document declares fewer statuses maps the others (e.g. 415 to 400).
   */
  clientStatus?: (status: number) => number;
  /** The message of one of fastify's own client errors, after `clientStatus`; `clientErrorMessage` by default. */
  clientMessage?: (status: number, error: FastifyError) => string;
  /** Codes of HttpErrors with a 5xx status that are expected (backpressure) and not logged. */
  quietCodes?: string[];
}

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request body too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported content type: send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid content length',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'empty JSON body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid JSON body',
};

/** The default message of a fastify client error: a fixed text per known code, the validation message, or the first line. */
export function clientErrorMessage(_status: number, error: FastifyError): string {
  const known = error.code ? FASTIFY_MESSAGES[error.code] : undefined;
  const message =
    known ?? (error.code === 'FST_ERR_VALIDATION' || !error.code ? error.message : error.message.split('\n')[0]);
  return message || 'bad request';
}

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function errorPlugin(app: FastifyInstance, options: ErrorPluginOptions): void {
  const clientStatus = options.clientStatus ?? ((status: number) => status);
  const clientMessage = options.clientMessage ?? clientErrorMessage;
  const quiet = new Set(options.quietCodes ?? []);

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      if (error.status >= 500 && !quiet.has(error.code)) request.log.error({ code: error.code }, error.message);
      return reply
        .code(error.status)
        .headers(error.headers)
        .send({ error: error.message, ...error.details });
    }
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      // Never echo internals: log the error (no request body is attached) and answer a generic message.
      // Only the class, code, message and stack: driver errors carry fields (detail, parameters) that may hold data.
      request.log.error(
        { err: { type: error.name, code: error.code, message: error.message, stack: error.stack } },
        'unhandled error',
      );
      return reply.code(500).send({ error: 'internal error' });
    }
    const mapped = clientStatus(status);
    return reply.code(mapped).send({ error: clientMessage(mapped, error) });
  });

  // Every route's method and path, to tell a wrong method on a known path (405) from an unknown path (404).
  const config = app.initialConfig as {
    ignoreTrailingSlash?: boolean;
    routerOptions?: { ignoreTrailingSlash?: boolean };
  };
  const routes = FindMyWay({
    ignoreTrailingSlash: config.routerOptions?.ignoreTrailingSlash ?? config.ignoreTrailingSlash ?? false,
    maxParamLength: Number.MAX_SAFE_INTEGER,
  });
  const noop = () => undefined;
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat() as HTTPMethod[]) {
      if (!METHODS.includes(method) || routes.hasRoute(method, r.url)) continue;
      routes.on(method, r.url, noop);
      if (method === 'GET' && !routes.hasRoute('HEAD', r.url)) routes.on('HEAD', r.url, noop);
    }
  });

  /** The methods `path` has, when it is known with another method than the one asked. */
  const allowedOn = (method: string, path: string): string[] =>
    METHODS.filter((m) => m !== method && routes.find(m, path) !== null);
  const methodNotAllowed = (reply: FastifyReply, method: string, path: string, allowed: string[]) =>
    reply
      .code(405)
      .header('allow', allowed.join(', '))
      .send({ error: `method ${method} not allowed on ${path}; allowed: ${allowed.join(', ')}` });

  // Before any body is parsed: a wrong method with a body fastify cannot parse is still 405, not a parser's 4xx.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404) return;
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedOn(request.method, path);
    if (allowed.length > 0) return methodNotAllowed(reply, request.method, path, allowed);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedOn(request.method, path);
    if (allowed.length > 0) return methodNotAllowed(reply, request.method, path, allowed);
    return reply.code(404).send({ error: `no route ${request.method} ${path}` });
  });
}

/**
 * The error plugin: register it before the routes (it records them to answer 405).
 * @example await app.register(errors, { clientStatus: (s) => (s === 415 ? 400 : s) });
 */
export const errors = fp(errorPlugin, { name: 'errors', fastify: '5.x' });
