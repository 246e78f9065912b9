// The open database (PostgreSQL pool or PGlite). Its owner (server.ts, a test) opens and closes it.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Database } from '../db/index.ts';

declare module 'fastify' {
  interface FastifyInstance {
    database: Database;
  }
}

async function database(app: FastifyInstance, opts: { database: Database }): Promise<void> {
  app.decorate('database', opts.database);
}

export default fp(database, { name: 'database', fastify: '5.x' });
