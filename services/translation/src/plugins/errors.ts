// Every error answer is `{error: string}`: the app's own errors, fastify's 400/404/413/415 and unexpected 500s.
import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';

const FASTIFY_STATUS_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request body too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported content type: send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid content length',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'empty JSON body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid JSON body',
};

function errorPlugin(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ code: error.code }, error.message);
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
    const known = error.code ? FASTIFY_STATUS_MESSAGES[error.code] : undefined;
    const message =
      known ?? (error.code === 'FST_ERR_VALIDATION' || !error.code ? error.message : error.message.split('\n')[0]);
    return reply.code(status).send({ error: message || 'bad request' });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
}

export default fp(errorPlugin, { name: 'errors', fastify: '5.x' });
