// The integrity watch's endpoints:
//   GET /watch (open read): what the broker watcher read (each broker: complete or why not, entities),
//     its last pass, and the notification queue.
//   GET /notifications/{record id}?sink=NAME (peer, token): whether this node delivered that tamper event to
//     that channel — how a backup validator learns that the proposer already did (docs/ledger-watch.md).
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { parseOr400 } from '../validate.ts';

export interface WatchService {
  /** The body of GET /watch. */
  status(): unknown;
  /** True when this node delivered the event to the sink. */
  delivered(eventId: string, sink: string): boolean;
}

const notificationQuery = z.object({ sink: z.string().min(1).max(2048) });
const notificationParams = z.object({ id: z.string().min(1).max(256) });

export const watchRoutes: FastifyPluginAsync<{ watch: WatchService }> = async (app, { watch }) => {
  app.get('/watch', async () => watch.status());

  app.get('/notifications/:id', { config: { protected: true } }, async (request) => {
    const { id } = parseOr400(notificationParams, request.params);
    const { sink } = parseOr400(notificationQuery, request.query);
    return { id, sink, delivered: watch.delivered(id, sink) };
  });
};
