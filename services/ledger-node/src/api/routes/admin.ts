// Debug/admin endpoints, registered only when NODE_DEBUG_API is true; authenticated.

import { ValidatorChange } from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import { submitQuery } from '../schemas.ts';
import type { LedgerService } from '../service.ts';
import { parseOr400 } from '../validate.ts';

const config = { protected: true };

export const adminRoutes: FastifyPluginAsync<{ service: LedgerService }> = async (app, { service }) => {
  app.post('/admin/submit', { config }, async (request) => {
    const { count } = parseOr400(submitQuery, request.query);
    return service.adminSubmit(count);
  });

  app.post('/admin/validator', { config }, async (request) => {
    const change = parseOr400(ValidatorChange, request.body);
    return service.adminValidator(change);
  });
};
