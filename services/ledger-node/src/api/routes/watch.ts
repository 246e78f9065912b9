// The integrity watch's endpoints:
//   GET /watch (open read): what the broker watcher read (each broker: complete or why not, entities),
//     its last pass, its subscriptions and notifications (subscribe mode), and the notification queue.
//   POST /watch/notify/{channel} (brokers; each subscription's secret in the Scriptorium-Notify-Token header,
//     checked in constant time): a broker's notification of changed entities, queued to be judged; 204 at once,
//     401 for a wrong channel or secret, 400 for a body that is no notification of that broker's API.
//   GET /notifications/{record id}?sink=NAME (peer, token): whether this node delivered that tamper event to
//     that channel — how a backup validator learns that the proposer already did (docs/ledger-watch.md).
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { NOTIFY_ROUTE, NOTIFY_TOKEN_HEADER } from '../../broker/notification.ts';
import { badRequest, NodeError } from '../../errors.ts';
import { parseOr400 } from '../validate.ts';

export interface WatchService {
  /** The body of GET /watch. */
  status(): unknown;
  /** True when this node delivered the event to the sink. */
  delivered(eventId: string, sink: string): boolean;
  /** A broker's notification on a channel, with the secret it carried. */
  notify(channel: string, token: string | undefined, body: unknown): 'accepted' | 'unauthorized' | 'malformed';
}

const notificationQuery = z.object({ sink: z.string().min(1).max(2048) });
const notificationParams = z.object({ id: z.string().min(1).max(256) });
const channelParams = z.object({ channel: z.string().min(1).max(64) });

export const watchRoutes: FastifyPluginAsync<{ watch: WatchService }> = async (app, { watch }) => {
  app.get('/watch', async () => watch.status());

  // NGSI-LD brokers may send the JSON-LD media type.
  app.addContentTypeParser('application/ld+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  app.post(NOTIFY_ROUTE, { config: { selfAuthenticated: true } }, async (request, reply) => {
    const { channel } = parseOr400(channelParams, request.params);
    const token = request.headers[NOTIFY_TOKEN_HEADER];
    const result = watch.notify(channel, typeof token === 'string' ? token : undefined, request.body);
    if (result === 'unauthorized') throw new NodeError('unauthorized', 'unknown channel or wrong secret');
    if (result === 'malformed') throw badRequest('not a notification of this broker');
    return reply.status(204).send();
  });

  app.get('/notifications/:id', { config: { protected: true } }, async (request) => {
    const { id } = parseOr400(notificationParams, request.params);
    const { sink } = parseOr400(notificationQuery, request.query);
    return { id, sink, delivered: watch.delivered(id, sink) };
  });
};
