// The configuration, the clock and the random source every other plugin and route reads.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    now: () => number;
    random: () => number;
  }
}

export interface SettingsOptions {
  config: Config;
  now?: () => number;
  /** Random in [0, 1) (background-judge sampling; a seeded one in tests). */
  random?: () => number;
}

async function settings(app: FastifyInstance, opts: SettingsOptions): Promise<void> {
  app.decorate('config', opts.config);
  app.decorate('now', opts.now ?? Date.now);
  app.decorate('random', opts.random ?? Math.random);
}

export default fp(settings, { name: 'settings', fastify: '5.x' });
