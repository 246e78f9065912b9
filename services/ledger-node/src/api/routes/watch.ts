// The integrity watch's endpoints:
//   GET /watch (open read): what the broker watcher read (each broker: complete or why not, entities),
//     its last pass, its subscriptions and notifications (subscribe mode), and the notification queue.
//   POST /watch/notify/{channel} (brokers; each subscription's secret in the Scriptorium-Notify-Token header,
//     checked in constant time): a broker's notification of changed entities, queued to be judged; 204 at once,
//     401 for a wrong channel or secret, 400 for a body that is no notification of that broker's API.
//   GET /notifications/{record id}?sink=NAME (peer, token): whether this node delivered that tamper event to
//     that channel — how a backup validator learns that the proposer already did (docs/ledger-watch.md).
import { route } from '@scriptorium/http';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { NOTIFY_ROUTE, NOTIFY_TOKEN_HEADER } from '../../broker/notification.ts';
import { badRequest, NodeError } from '../../errors.ts';
import { r400, r401, r413, r429 } from '../schemas.ts';

export interface WatchService {
  /** The body of GET /watch. */
  status(): unknown;
  /** True when this node delivered the event to the sink. */
  delivered(eventId: string, sink: string): boolean;
  /** A broker's notification on a channel, with the secret it carried. */
  notify(channel: string, token: string | undefined, body: unknown): 'accepted' | 'unauthorized' | 'malformed';
}

/** GET /watch: the watcher's report (null without brokers) and the notification queue (null without sinks). */
const WatchStatus = z.object({
  watcher: z.looseObject({}).nullable(),
  notifications: z
    .object({ sinks: z.array(z.string()), queued: z.int().min(0), height: z.int() })
    .nullable()
    .meta({ description: '`height`: the last finalized height the notifier has handed on (-1 before any)' }),
});
const notificationQuery = z.object({ sink: z.string().min(1).max(2048) });
const notificationParams = z.object({ id: z.string().min(1).max(256) });
const NotificationStatus = z.object({ id: z.string(), sink: z.string(), delivered: z.boolean() });
const channelParams = z.object({ channel: z.string().min(1).max(64) });

export const watchRoutes: FastifyPluginAsync<{ watch: WatchService }> = async (app, { watch }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/watch',
      operationId: 'watchStatus',
      summary: 'What the broker watcher read, its last pass, and the notification queue',
      tags: ['read'],
      security: 'none',
      responses: { 200: { description: 'the watch', schema: WatchStatus }, 429: r429 },
    },
    {},
    async () => watch.status(),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/notifications/:id',
      operationId: 'notificationDelivered',
      summary: 'Whether this node delivered the tamper event of a record to a notification channel',
      tags: ['peer'],
      security: 'clusterToken',
      params: notificationParams,
      querystring: notificationQuery,
      responses: {
        200: { description: 'delivered or not', schema: NotificationStatus },
        400: r400,
        401: r401,
        429: r429,
      },
    },
    { config: { protected: true } },
    async (request) => {
      const { id } = request.params;
      const { sink } = request.query;
      return { id, sink, delivered: watch.delivered(id, sink) };
    },
  );

  // NGSI-LD brokers may send the JSON-LD media type.
  app.addContentTypeParser('application/ld+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  route(
    app,
    {
      method: 'POST',
      url: NOTIFY_ROUTE,
      operationId: 'brokerNotification',
      summary: 'A broker’s notification of changed entities (subscribe mode), queued to be judged',
      description:
        'Each subscription has its channel and its secret, sent in the `Scriptorium-Notify-Token` header and ' +
        'compared in constant time. The body is a notification of that broker’s API (NGSI-v2 or NGSI-LD; ' +
        '`application/ld+json` accepted too).',
      tags: ['watch'],
      security: 'notifyToken',
      params: channelParams,
      body: z.unknown(),
      responses: {
        204: { description: 'queued' },
        400: { ...r400, description: 'not a notification of this broker' },
        401: { ...r401, description: 'unknown channel or wrong secret' },
        413: r413,
        429: r429,
      },
    },
    { config: { selfAuthenticated: true } },
    async (request, reply) => {
      const token = request.headers[NOTIFY_TOKEN_HEADER];
      const result = watch.notify(request.params.channel, typeof token === 'string' ? token : undefined, request.body);
      if (result === 'unauthorized') throw new NodeError('unauthorized', 'unknown channel or wrong secret');
      if (result === 'malformed') throw badRequest('not a notification of this broker');
      return reply.status(204).send();
    },
  );
};
