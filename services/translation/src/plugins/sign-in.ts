// GitHub sign-in (OAuth 2.0 authorization code flow with `state` and PKCE S256) through @fastify/oauth2, against the
// configured endpoints (OAUTH__AUTHORIZE_URL, OAUTH__TOKEN_URL), so tests and air-gapped installs use another server.
// Decorates `app.signIn`; without OAUTH__CLIENT_ID and OAUTH__CLIENT_SECRET sign-in is disabled.
import oauth2, { type OAuth2Namespace, type OAuth2Token } from '@fastify/oauth2';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, signInFailed } from '../errors.ts';

export interface SignIn {
  readonly enabled: boolean;
  /** Where to send the browser: the provider's authorize URL (sets the state and PKCE verifier cookies). */
  authorizationUri(request: FastifyRequest, reply: FastifyReply): Promise<string>;
  /** Checks the state, exchanges the code (with the verifier) and returns the access token. */
  accessToken(request: FastifyRequest, reply: FastifyReply): Promise<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    signIn: SignIn;
  }
}

export const CALLBACK_PATH = '/auth/github/callback';
/** GitHub scopes: the profile and the e-mail addresses (to read the verified primary one). */
export const SCOPES = ['read:user', 'user:email'];

export const signInDisabled = () => new AppError('unavailable', 503, 'sign-in is not configured on this service');

function hostAndPath(url: string): { host: string; path: string } {
  const u = new URL(url);
  return { host: u.origin, path: `${u.pathname}${u.search}` };
}

async function signIn(app: FastifyInstance): Promise<void> {
  const { oauth, environment, publicBaseUrl } = app.config;
  if (!oauth) {
    app.decorate('signIn', {
      enabled: false,
      authorizationUri: async () => {
        throw signInDisabled();
      },
      accessToken: async () => {
        throw signInDisabled();
      },
    } satisfies SignIn);
    return;
  }
  const authorize = hostAndPath(oauth.authorizeUrl);
  const token = hostAndPath(oauth.tokenUrl);
  await app.register(oauth2, {
    name: 'githubOAuth2',
    scope: SCOPES,
    credentials: {
      client: { id: oauth.clientId, secret: oauth.clientSecret },
      auth: {
        authorizeHost: authorize.host,
        authorizePath: authorize.path,
        tokenHost: token.host,
        tokenPath: token.path,
      },
      // As GitHub documents it: client_id and client_secret in the form body; the JSON answer is asked for with
      // `Accept: application/json` (the library's default header).
      options: { authorizationMethod: 'body' },
    },
    callbackUri: `${publicBaseUrl}${CALLBACK_PATH}`,
    pkce: 'S256',
    cookie: { secure: environment !== 'development', sameSite: 'lax', httpOnly: true, path: '/auth' },
  });
  const github = (app as unknown as { githubOAuth2: OAuth2Namespace }).githubOAuth2;
  app.decorate('signIn', {
    enabled: true,
    authorizationUri: (request, reply) => github.generateAuthorizationUri(request, reply),
    async accessToken(request, reply) {
      let result: OAuth2Token;
      try {
        result = await github.getAccessTokenFromAuthorizationCodeFlow(request, reply);
      } catch {
        throw signInFailed(); // invalid state, or the token endpoint refused the exchange
      }
      // GitHub answers a refused exchange with HTTP 200 and an `error` field, not a token.
      const accessToken = (result.token as { access_token?: unknown }).access_token;
      if (typeof accessToken !== 'string' || accessToken.length === 0) throw signInFailed();
      return accessToken;
    },
  } satisfies SignIn);
}

export default fp(signIn, { name: 'sign-in', fastify: '5.x', dependencies: ['settings', '@fastify/cookie'] });
