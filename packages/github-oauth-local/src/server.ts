// A local OAuth 2.0 authorization server speaking GitHub's documented OAuth App endpoints, for tests, `make dev` and
// the end-to-end suite (GitHub itself cannot be reached from here). Dependency-free (node:http, node:crypto), so it
// also runs from a mounted file in any Node 24 image.
//
//   GET  /login/oauth/authorize      client_id, redirect_uri, scope, state, code_challenge(+_method=S256), login
//                                    → an HTML page to pick a user; with `login=<user>` the user approves at once
//                                    (302 to redirect_uri?code=…&state=…)
//   POST /login/oauth/authorize      the page's form (login) → the same redirect
//   POST /login/oauth/access_token   client_id + client_secret (form, JSON or HTTP Basic), code, redirect_uri,
//                                    code_verifier → JSON with `Accept: application/json`, else form-encoded;
//                                    failures are HTTP 200 with `error` / `error_description`, as GitHub answers
//   GET  /api/v3/user                `Authorization: Bearer|token <access token>` → the user (GitHub's REST shape)
//   GET  /api/v3/user/emails         needs the `user:email` scope → [{email, primary, verified, visibility}]
//
// The API base is `<origin>/api/v3`, as on GitHub Enterprise Server (`OAUTH__API_URL`).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface LocalGitHubUser {
  login: string;
  id: number;
  name: string | null;
  /** The public profile e-mail (GitHub's `email` field of /user; often null). */
  publicEmail?: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface LocalGitHubOptions {
  clientId: string;
  clientSecret: string;
  users?: LocalGitHubUser[];
  /** Address to listen on (default 127.0.0.1) and port (default 0: any free port). */
  host?: string;
  port?: number;
}

export interface LocalGitHub {
  /** Origin, e.g. http://127.0.0.1:41234 */
  url: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** The REST API base (`/api/v3`). */
  apiUrl: string;
  users: LocalGitHubUser[];
  addUser(user: LocalGitHubUser): void;
  /** Token requests seen (for tests: what the client sent, secrets included — never logged). */
  readonly tokenRequests: { headers: Record<string, string | string[] | undefined>; body: Record<string, string> }[];
  /** Access tokens handed out (for tests: a client must never store or log them). */
  readonly issuedTokens: string[];
  close(): Promise<void>;
}

/** The test user of `make dev` and the end-to-end suite. */
export const DEFAULT_USERS: LocalGitHubUser[] = [
  {
    login: 'octo-dev',
    id: 583231,
    name: 'Octo Dev',
    publicEmail: null,
    emails: [
      { email: 'octo-dev@users.noreply.localhost', primary: false, verified: true },
      { email: 'octo.dev@example.com', primary: true, verified: true },
    ],
  },
];

interface Grant {
  clientId: string;
  login: string;
  redirectUri: string | undefined;
  scope: string;
  challenge: string | undefined;
  expires: number;
}

const CODE_TTL_MS = 10 * 60_000;
const MAX_BODY = 64 * 1024;

const sha256url = (s: string) => createHash('sha256').update(s).digest('base64url');
const token = (prefix: string) => `${prefix}_${randomBytes(24).toString('base64url')}`;
const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function equal(a: string, b: string): boolean {
  const x = Buffer.from(sha256url(a));
  const y = Buffer.from(sha256url(b));
  return timingSafeEqual(x, y);
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseParams(req: IncomingMessage, body: string): Record<string, string> {
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json')) {
    try {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(body));
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * Starts the local GitHub-compatible OAuth server.
 * @example const gh = await startLocalGitHub({ clientId: 'Iv1.dev', clientSecret: 's' }); gh.authorizeUrl; await gh.close();
 */
export async function startLocalGitHub(opts: LocalGitHubOptions): Promise<LocalGitHub> {
  const users = [...(opts.users ?? DEFAULT_USERS)];
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, { login: string; scope: string }>();
  const tokenRequests: LocalGitHub['tokenRequests'] = [];
  const issuedTokens: string[] = [];

  function approve(res: ServerResponse, params: Record<string, string>) {
    const user = users.find((u) => u.login === params.login);
    if (!user) return send(res, 404, `<p>No user ${escapeHtml(params.login ?? '')}</p>`);
    const code = randomBytes(10).toString('hex');
    codes.set(code, {
      clientId: params.client_id ?? '',
      login: user.login,
      redirectUri: params.redirect_uri,
      scope: params.scope ?? '',
      challenge: params.code_challenge,
      expires: Date.now() + CODE_TTL_MS,
    });
    const target = new URL(params.redirect_uri!);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.writeHead(302, { location: target.toString(), 'cache-control': 'no-store' });
    res.end();
  }

  function authorize(res: ServerResponse, params: Record<string, string>) {
    if (params.client_id !== opts.clientId) return send(res, 404, '<p>Unknown OAuth application (client_id).</p>');
    if (!params.redirect_uri || !/^https?:\/\//.test(params.redirect_uri))
      return send(res, 400, '<p>redirect_uri is required.</p>');
    if (params.code_challenge !== undefined && params.code_challenge_method !== 'S256')
      return send(res, 400, '<p>code_challenge_method must be S256.</p>');
    if (params.login) return approve(res, params);
    const hidden = Object.entries(params)
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join('');
    const buttons = users
      .map(
        (u) =>
          `<button name="login" value="${escapeHtml(u.login)}">Sign in as ${escapeHtml(u.login)}${u.name ? ` (${escapeHtml(u.name)})` : ''}</button>`,
      )
      .join('<br>');
    send(
      res,
      200,
      `<!doctype html><title>Authorize (local GitHub)</title><h1>Authorize application</h1>` +
        `<p>Local OAuth server for development: pick a user.</p><form method="post">${hidden}${buttons}</form>`,
    );
  }

  function exchange(req: IncomingMessage, res: ServerResponse, params: Record<string, string>) {
    tokenRequests.push({ headers: { ...req.headers }, body: { ...params } });
    const wantsJson = (req.headers.accept ?? '').includes('application/json');
    const answer = (body: Record<string, string>) => {
      if (wantsJson) return send(res, 200, body);
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
      res.end(new URLSearchParams(body).toString());
    };
    const fail = (error: string, description: string) =>
      answer({ error, error_description: description, error_uri: 'https://docs.github.com/apps/oauth' });
    let clientId = params.client_id;
    let clientSecret = params.client_secret;
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (basic?.[1]) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id ?? '');
      clientSecret = decodeURIComponent(secret ?? '');
    }
    if (clientId !== opts.clientId || !clientSecret || !equal(clientSecret, opts.clientSecret))
      return fail('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
    const grant = params.code ? codes.get(params.code) : undefined;
    if (params.code) codes.delete(params.code); // a code is good for one exchange only
    if (!grant || grant.expires < Date.now() || grant.clientId !== clientId)
      return fail('bad_verification_code', 'The code passed is incorrect or expired.');
    if (grant.redirectUri !== undefined && params.redirect_uri !== grant.redirectUri)
      return fail(
        'redirect_uri_mismatch',
        'The redirect_uri MUST match the registered callback URL for this application.',
      );
    if (grant.challenge !== undefined) {
      if (!params.code_verifier || sha256url(params.code_verifier) !== grant.challenge)
        return fail('bad_verification_code', 'The code_verifier does not match the code_challenge.');
    }
    const accessToken = token('gho');
    tokens.set(accessToken, { login: grant.login, scope: grant.scope });
    issuedTokens.push(accessToken);
    answer({ access_token: accessToken, token_type: 'bearer', scope: grant.scope.replace(/ /g, ',') });
  }

  function api(req: IncomingMessage, res: ServerResponse, path: string) {
    const auth = /^(?:Bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const grant = auth?.[1] ? tokens.get(auth[1]) : undefined;
    const user = grant ? users.find((u) => u.login === grant.login) : undefined;
    if (!grant || !user)
      return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    if (path === '/user') {
      return send(res, 200, {
        login: user.login,
        id: user.id,
        node_id: Buffer.from(`04:User${user.id}`).toString('base64'),
        type: 'User',
        name: user.name,
        email: user.publicEmail ?? null,
        avatar_url: `${origin()}/avatars/${user.id}`,
      });
    }
    if (path === '/user/emails') {
      if (!grant.scope.split(/[ ,]/).includes('user:email') && !grant.scope.split(/[ ,]/).includes('user'))
        return send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
      return send(
        res,
        200,
        user.emails.map((e) => ({ ...e, visibility: e.primary ? 'private' : null })),
      );
    }
    send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const path = url.pathname;
    void (async () => {
      try {
        if (path === '/login/oauth/authorize' && req.method === 'GET')
          return authorize(res, Object.fromEntries(url.searchParams));
        if (path === '/login/oauth/authorize' && req.method === 'POST')
          return authorize(res, parseParams(req, await readBody(req)));
        if (path === '/login/oauth/access_token' && req.method === 'POST')
          return exchange(req, res, {
            ...Object.fromEntries(url.searchParams),
            ...parseParams(req, await readBody(req)),
          });
        if (path.startsWith('/api/v3/') && req.method === 'GET') return api(req, res, path.slice('/api/v3'.length));
        if (path === '/healthz') return send(res, 200, { status: 'ok' });
        send(res, 404, { message: 'Not Found' });
      } catch {
        if (!res.headersSent) send(res, 400, { message: 'Bad request' });
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const host = opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1';
  const origin = () => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: origin(),
    authorizeUrl: `${origin()}/login/oauth/authorize`,
    tokenUrl: `${origin()}/login/oauth/access_token`,
    apiUrl: `${origin()}/api/v3`,
    users,
    addUser: (user) => void users.push(user),
    tokenRequests,
    issuedTokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
