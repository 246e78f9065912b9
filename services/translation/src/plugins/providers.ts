// The configured translation provider, and the pseudo provider the heuristic judge runs on.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createProvider, type TranslationProvider } from '../providers/index.ts';

declare module 'fastify' {
  interface FastifyInstance {
    provider: TranslationProvider;
    heuristicProvider: TranslationProvider;
  }
}

async function providers(app: FastifyInstance, opts: { provider?: TranslationProvider }): Promise<void> {
  const p = app.config.provider;
  app.decorate(
    'provider',
    opts.provider ??
      createProvider({
        kind: p.kind,
        ...(p.baseUrl ? { baseUrl: p.baseUrl } : {}),
        ...(p.apiKey ? { apiKey: p.apiKey } : {}),
        timeoutMs: p.timeoutMs,
        openaiTokenLimit: p.openaiTokenLimit,
      }),
  );
  app.decorate('heuristicProvider', createProvider({ kind: 'pseudo', timeoutMs: p.timeoutMs }));
}

export default fp(providers, { name: 'providers', fastify: '5.x', dependencies: ['settings'] });
