// Debug/admin endpoints, registered only when NODE_DEBUG_API is true; authenticated.

import { route } from '@scriptorium/http';
import { AcceptedBody, ValidatorChange } from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import { r400, r401, r413, r429, submitQuery } from '../schemas.ts';
import type { LedgerService } from '../service.ts';

const protectedRoute = { config: { protected: true } };

export const adminRoutes: FastifyPluginAsync<{ service: LedgerService }> = async (app, { service }) => {
  route(
    app,
    {
      method: 'POST',
      url: '/admin/submit',
      operationId: 'adminSubmit',
      summary: 'Inject `count` synthetic records and trigger consensus (demo and test)',
      tags: ['admin'],
      security: 'clusterToken',
      querystring: submitQuery,
      responses: {
        200: { description: 'records accepted', schema: AcceptedBody },
        400: r400,
        401: r401,
        429: r429,
      },
    },
    protectedRoute,
    async (request) => service.adminSubmit(request.query.count),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/admin/validator',
      operationId: 'adminValidator',
      summary: 'Propose a validator change',
      tags: ['admin'],
      security: 'clusterToken',
      body: ValidatorChange,
      responses: {
        200: { description: 'whether the change was new', schema: AcceptedBody },
        400: r400,
        401: r401,
        413: r413,
        429: r429,
      },
    },
    protectedRoute,
    async (request) => service.adminValidator(request.body),
  );
};
