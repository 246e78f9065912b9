// The metering module (reservations and settlements, group commit on PostgreSQL) as `app.meter`.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Meter } from '../domain/metering.ts';
import { createMeter } from '../infra/meter.ts';

declare module 'fastify' {
  interface FastifyInstance {
    meter: Meter;
  }
}

async function metering(app: FastifyInstance): Promise<void> {
  const metrics = app.metrics;
  app.decorate(
    'meter',
    createMeter(app.database, {
      // Concurrent reservations and settlements share statements (group commit); PostgreSQL only.
      batching: true,
      metrics,
      now: app.now,
      onBatch: (kind, size) => metrics.meterBatchSize.observe({ kind }, size),
      // The PostgreSQL error code only: a message could quote arguments.
      onFallback: (error) =>
        app.log.warn(
          { code: typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'error' },
          'metering batch failed; ran one by one',
        ),
    }),
  );
}

export default fp(metering, {
  name: 'metering',
  fastify: '5.x',
  dependencies: ['settings', 'database', 'observability'],
});
