// Organizations, members, invites and usage (registered under /api/v1/orgs). Every refusal of an organization the
// caller may not act on is the same 403, whether it exists or not.

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { exportTmx, importTmx, memoryStatus, setMemory } from '../../../domain/memory.ts';
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
} from '../../../domain/orgs.ts';
import { orgUsage } from '../../../domain/usage.ts';
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
  MemoryImport,
  MemoryImported,
  MemoryStatus,
  MemorySwitch,
  Organization,
  OrganizationList,
  OrgCreate,
  RoleChange,
  Usage,
} from '../../../http/schemas.ts';
import { actorOf, r400, r401, r403, r404, r409, r413, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

/** TMX uploads (the memory import): XML as a string, up to this many bytes. */
const TMX_MAX_BYTES = 16 * 1024 * 1024;
const TMX_TYPES = ['application/x-tmx+xml', 'application/xml', 'text/xml'];

export default async function orgRoutes(app: FastifyInstance): Promise<void> {
  const hooks = (path: string, perMinute = 120) => ({
    onRequest: sessionHooks(app, `${app.prefix}${path}`, perMinute),
  });
  // Only this folder's routes take XML (the TMX import); everywhere else a body is JSON.
  app.addContentTypeParser(TMX_TYPES, { parseAs: 'string', bodyLimit: TMX_MAX_BYTES }, (_req, body, done) =>
    done(null, body),
  );
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

  route(
    app,
    {
      method: 'GET',
      url: '/:id/memory',
      operationId: 'organizationMemory',
      summary: 'Whether the organization’s translation memory is on, and how many entries it holds (members)',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      responses: { 200: ok('the memory', MemoryStatus), 401: r401, 403: r403, 429: r429 },
    },
    hooks('/:id/memory'),
    async (request) => memoryStatus(app, actorOf(request), request.params.id),
  );

  route(
    app,
    {
      method: 'PUT',
      url: '/:id/memory',
      operationId: 'switchOrganizationMemory',
      summary: 'Turn the translation memory on or off (admin or above); off deletes every entry',
      description:
        'Off by default (zero retention). When on, translations that passed the validators, approved and edited ' +
        'review results and TMX imports are kept for this organization only, per locale pair; an exact match is ' +
        'answered without a provider call and without tokens.',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      body: MemorySwitch,
      responses: { 200: ok('the memory', MemoryStatus), 400: r400, 401: r401, 403: r403, 429: r429 },
    },
    hooks('/:id/memory', 30),
    async (request) => setMemory(app, actorOf(request), request.params.id, request.body.enabled),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/:id/memory.tmx',
      operationId: 'exportOrganizationMemory',
      summary: 'The translation memory as TMX 1.4b (admin or above)',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      responses: {
        200: { description: 'TMX 1.4b document', contentType: 'application/x-tmx+xml', headers: rateLimitHeaders },
        401: r401,
        403: r403,
        429: r429,
      },
    },
    hooks('/:id/memory.tmx', 30),
    async (request, reply) => {
      const tmx = await exportTmx(app, actorOf(request), request.params.id);
      return reply
        .type('application/x-tmx+xml; charset=utf-8')
        .header('content-disposition', `attachment; filename="memory-${request.params.id}.tmx"`)
        .send(tmx);
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/:id/memory.tmx',
      operationId: 'importOrganizationMemory',
      summary: 'Import a TMX document into the translation memory (admin or above; the memory must be on)',
      tags: ['organizations'],
      security: 'session',
      params: IdParams,
      body: MemoryImport,
      bodyContentType: 'application/x-tmx+xml',
      responses: {
        200: ok('what was imported', MemoryImported),
        400: { ...r400, description: 'not a TMX document (with the line and the reason)' },
        401: r401,
        403: r403,
        409: { ...r409, description: 'the translation memory is off' },
        413: { ...r413, description: `TMX document larger than ${TMX_MAX_BYTES} bytes` },
        429: r429,
      },
    },
    hooks('/:id/memory.tmx', 10),
    async (request) => importTmx(app, actorOf(request), request.params.id, request.body),
  );
}
