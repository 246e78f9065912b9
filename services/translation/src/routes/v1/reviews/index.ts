// The review queue and the actions on review items (registered under /api/v1/reviews). Statuses: open → approved |
// edited | rejected; an action on a decided item is 409; an unknown item and another organization's are both 404.

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { actOnReview, listReviews } from '../../../domain/reviews.ts';
import {
  IdParams,
  ReviewAction,
  ReviewItem,
  ReviewList,
  ReviewListQuery,
  ValidationFailedBody,
} from '../../../http/schemas.ts';
import { actorOf, r400, r401, r403, r404, r409, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function reviewRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'GET',
      url: '',
      operationId: 'listReviews',
      summary: 'The review queue of an organization (members), newest first; open items by default',
      tags: ['reviews'],
      security: 'session',
      querystring: ReviewListQuery,
      responses: {
        200: { description: 'review items', schema: ReviewList, headers: rateLimitHeaders },
        400: r400,
        401: r401,
        403: r403,
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, app.prefix, 120) },
    async (request) => ({ items: await listReviews(app, actorOf(request), request.query.orgId, request.query) }),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/:id',
      operationId: 'actOnReview',
      summary: 'Approve, edit or reject a review item',
      description:
        '`approve` keeps the target; `edit` replaces it with `text`, which must pass the same validators as translate ' +
        '(ICU, placeholders and tags, the item’s glossary: 422 with the issues otherwise); `reject` needs a `reason`. ' +
        'The answer carries the new `status` and `finalTarget` (null when rejected).',
      tags: ['reviews'],
      security: 'session',
      params: IdParams,
      body: ReviewAction,
      responses: {
        200: {
          description: 'the item with its new status and finalTarget',
          schema: ReviewItem,
          headers: rateLimitHeaders,
        },
        400: r400,
        401: r401,
        403: { ...r403, description: 'cross-origin request refused' },
        404: { ...r404, description: 'no such review item, or one of an organization the caller is not a member of' },
        409: { ...r409, description: 'the item is already decided' },
        422: { description: 'the edited text fails the validators', schema: ValidationFailedBody },
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, `${app.prefix}/:id`, 120) },
    async (request) => actOnReview(app, actorOf(request), request.params.id, request.body),
  );
}
