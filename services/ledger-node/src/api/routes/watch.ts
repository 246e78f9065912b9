// The integrity watch's endpoints:
//   GET /watch (open read): what the broker watcher read (each broker: complete or why not, entities),
//     its last pass, and the notification queue.
//   GET /notifications/{record id}?sink=NAME (peer, token): whether this node delivered that tamper event to
//     that channel — how a backup validator learns that the proposer already did (docs/ledger-watch.md).
import { route } from '@scriptorium/http';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { r400, r401, r429 } from '../schemas.ts';

export interface WatchService {
  /** The body of GET /watch. */
  status(): unknown;
  /** True when this node delivered the event to the sink. */
  delivered(eventId: string, sink: string): boolean;
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
};
