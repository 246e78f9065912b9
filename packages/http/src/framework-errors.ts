// Answers for what fastify and Node refuse before any route runs (a malformed URL, a path parameter over the router's
// limit, a request line and headers over Node's limit): `{error}` bodies like every other error, not fastify's own.
// Pass them as the server options `frameworkErrors` and `clientErrorHandler`, with `routerOptions.maxParamLength` =
// MAX_PARAM_LENGTH.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
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

/** Node's limit on the request line and headers together (its `--max-http-header-size` default), in bytes. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * fastify's `clientErrorHandler` option, for what Node's HTTP parser refuses (no request exists yet): 431 when the
 * request line and headers exceed MAX_HEADER_BYTES (a URL too long for any route), 408 on a request timeout, 400 for
 * anything else it cannot parse; the connection is closed after.
 * @example Fastify({ clientErrorHandler })
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `the request line and headers exceed ${MAX_HEADER_BYTES} bytes`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request timeout']
        : [400, 'malformed request'];
  const body = JSON.stringify({ error: message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
