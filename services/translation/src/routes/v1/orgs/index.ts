// Organizations, members, invites and usage (registered under /api/v1/orgs). Every refusal of an organization the
// caller may not act on is the same 403, whether it exists or not.
import type { FastifyInstance } from 'fastify';
import { route } from '../../../http/route-spec.ts';
import {
  Billing,
  IdParams,
  InviteCreated,
  InviteList,
  InviteParams,
  InviteRequest,
  Member,
  MemberList,
  MemberParams,
  Organization,
  OrganizationList,
  OrgCreate,
  RoleChange,
  Usage,
} from '../../../http/schemas.ts';
import {
  billingOf,
  changeRole,
  createOrg,
  invite,
  listInvites,
  listMembers,
  listOrgs,
  removeMember,
  withdrawInvite,
} from '../../../services/orgs.ts';
import { orgUsage } from '../../../services/usage.ts';
import { actorOf, r400, r401, r403, r404, r409, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function orgRoutes(app: FastifyInstance): Promise<void> {
  const hooks = (path: string, perMinute = 120) => ({
    onRequest: sessionHooks(app, `${app.prefix}${path}`, perMinute),
  });
  const ok = (description: string, schema: Parameters<typeof route>[1]['body']) => ({
    description,
    ...(schema ? { schema } : {}),
    headers: rateLimitHeaders,
  });

  route(
    app,
    {
      method: 'POST',
      url: '',
      operationId: 'createOrganization',
      summary: 'Create an organization (the caller becomes its owner; the default plan)',
      tags: ['organizations'],
      security: 'session',
      body: OrgCreate,
      responses: { 200: ok('the organization', Organization), 400: r400, 401: r401, 429: r429 },
    },
    hooks('', 20),
    async (request) => createOrg(app, actorOf(request), request.body.name),
  );

  route(
    app,
    {
      method: 'GET',
      url: '',
      operationId: 'listOrganizations',
      summary: 'The caller’s organizations and roles',
      tags: ['organizations'],
      security: 'session',
      responses: { 200: ok('the organizations', OrganizationList), 401: r401, 429: r429 },
    },
    hooks(''),
    async (request) => ({ organizations: await listOrgs(app, actorOf(request)) }),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/:id/members',
      operationId: 'listMembers',
      summary: 'The members of an organization (members only)',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      responses: { 200: ok('members', MemberList), 401: r401, 403: r403, 429: r429 },
    },
    hooks('/:id/members'),
    async (request) => ({ members: await listMembers(app, actorOf(request), request.params.id) }),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/:id/members',
      operationId: 'inviteMember',
      summary: 'Invite by e-mail (admin or above; the owner role only by an owner)',
      description:
        'Creates an invite with a token and an expiry (INVITE__TTL_HOURS) and returns the accept link to send; the ' +
        'invitee signs in and accepts it (POST /api/v1/invites/accept).',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      body: InviteRequest,
      responses: {
        200: ok('invite created', InviteCreated),
        400: { ...r400, description: 'email missing or invalid' },
        401: r401,
        403: r403,
        409: { ...r409, description: 'already a member' },
        429: r429,
      },
    },
    hooks('/:id/members', 30),
    async (request) => invite(app, actorOf(request), request.params.id, request.body),
  );

  route(
    app,
    {
      method: 'PATCH',
      url: '/:id/members/:userId',
      operationId: 'changeRole',
      summary: 'Change a member’s role (admin or above; owners only by an owner; never the last owner)',
      tags: ['organizations'],
      security: 'session',
      params: MemberParams,
      body: RoleChange,
      responses: {
        200: ok('the member', Member),
        400: r400,
        401: r401,
        403: r403,
        404: r404,
        409: { ...r409, description: 'the last owner cannot give up the role' },
        429: r429,
      },
    },
    hooks('/:id/members/:userId', 30),
    async (request) => changeRole(app, actorOf(request), request.params.id, request.params.userId, request.body.role),
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/:id/members/:userId',
      operationId: 'removeMember',
      summary: 'Remove a member (admin or above; an owner only by an owner), or leave (your own user id)',
      tags: ['organizations'],
      security: 'session',
      params: MemberParams,
      responses: {
        204: { description: 'removed', headers: rateLimitHeaders },
        401: r401,
        403: r403,
        404: r404,
        409: { ...r409, description: 'the last owner cannot leave or be removed' },
        429: r429,
      },
    },
    hooks('/:id/members/:userId', 30),
    async (request, reply) => {
      await removeMember(app, actorOf(request), request.params.id, request.params.userId);
      return reply.code(204).send();
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/:id/invites',
      operationId: 'listInvites',
      summary: 'Pending invites (admin or above)',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      responses: { 200: ok('pending invites', InviteList), 401: r401, 403: r403, 429: r429 },
    },
    hooks('/:id/invites'),
    async (request) => ({ invites: await listInvites(app, actorOf(request), request.params.id) }),
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/:id/invites/:inviteId',
      operationId: 'withdrawInvite',
      summary: 'Withdraw a pending invite (admin or above)',
      tags: ['organizations'],
      security: 'session',
      params: InviteParams,
      responses: {
        204: { description: 'withdrawn', headers: rateLimitHeaders },
        401: r401,
        403: r403,
        404: r404,
        429: r429,
      },
    },
    hooks('/:id/invites/:inviteId', 30),
    async (request, reply) => {
      await withdrawInvite(app, actorOf(request), request.params.id, request.params.inviteId);
      return reply.code(204).send();
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/:id/usage',
      operationId: 'organizationUsage',
      summary: 'Usage of the current quota period per day and model, against the quota and today’s budget (members)',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      responses: { 200: ok('usage', Usage), 401: r401, 403: r403, 429: r429 },
    },
    hooks('/:id/usage'),
    async (request) => orgUsage(app, actorOf(request), request.params.id),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/:id/billing',
      operationId: 'organizationBilling',
      summary: 'The subscription (plan, status, period end) and the payment provider’s recent events (owners)',
      description:
        'The payment provider changes the subscription through the billing webhook; an organization is bound to its ' +
        'customer by the subscription’s `metadata.orgId`.',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      responses: { 200: ok('billing', Billing), 401: r401, 403: r403, 429: r429 },
    },
    hooks('/:id/billing'),
    async (request) => billingOf(app, actorOf(request), request.params.id),
  );
}
