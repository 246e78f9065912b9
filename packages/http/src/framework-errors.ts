// Answers for what fastify refuses before any route runs (a malformed URL, a path parameter over the router's
// limit): `{error}` bodies like every other error, not fastify's own. Pass it as the server option
// `frameworkErrors`, with `routerOptions.maxParamLength` = MAX_PARAM_LENGTH.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** The longest path parameter the router accepts (fastify's default); a longer one is 414. */
export const MAX_PARAM_LENGTH = 100;

/**
 * fastify's `frameworkErrors` option: 414 for an over-long path parameter, 400 for a malformed URL.
 * @example Fastify({ frameworkErrors, routerOptions: { maxParamLength: MAX_PARAM_LENGTH } })
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.code(414).send({ error: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters` });
    return;
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send({ error: 'malformed URL' });
    return;
  }
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
  reply.code(status).send({ error: status >= 500 ? 'internal error' : 'bad request' });
}
