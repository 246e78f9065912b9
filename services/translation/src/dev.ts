// `make dev` (through tools/dev.ts): the service on embedded PGlite (in .dev/translation/) with the pseudo
// provider, and a local GitHub-compatible OAuth server to sign in through (its URL and test user are printed);
// creates a user, an organization and an API key, and prints curl lines that work.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_USERS, startLocalGitHub } from '@scriptorium/github-oauth-local';
import { loadConfig } from './config.ts';
import { migrate, openDatabase } from './db/index.ts';
import { handleSignals, startServer } from './server.ts';
import { createOrganization, ensureUser, issueApiKey } from './services/accounts.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const dataDir = process.env.TRANSLATION_DEV_DIR ?? join(root, '.dev', 'translation', 'pgdata');
const workerSecret = randomBytes(24).toString('base64url');
const port = process.env.PORT ?? '3000';

/** A dev secret kept beside the data (the MFA key must outlive a restart: the secrets it encrypted stay in PGlite). */
function devSecret(name: string): string {
  const file = join(dirname(dataDir), name);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

const oauthClient = { clientId: 'scriptorium-dev', clientSecret: devSecret('oauth-client-secret') };
const github = await startLocalGitHub({ ...oauthClient, port: Number(process.env.DEV_OAUTH_PORT ?? 0) });
const testUser = DEFAULT_USERS[0]!;

const config = loadConfig({
  NODE_ENV: 'development',
  PORT: port,
  HOST: '127.0.0.1',
  PROVIDER__KIND: 'pseudo',
  WORKER_SECRET: workerSecret,
  LOG_LEVEL: 'info',
  PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  OAUTH__CLIENT_ID: oauthClient.clientId,
  OAUTH__CLIENT_SECRET: oauthClient.clientSecret,
  OAUTH__AUTHORIZE_URL: github.authorizeUrl,
  OAUTH__TOKEN_URL: github.tokenUrl,
  OAUTH__API_URL: github.apiUrl,
  MFA__ENCRYPTION_KEY: devSecret('mfa-key'),
  BILLING__WEBHOOK_SECRET: devSecret('billing-webhook-secret'),
  ...process.env,
  DATABASE_URL: `pglite:${dataDir}`,
});

const database = await openDatabase(config.databaseUrl!);
await migrate(database);
const userId = await ensureUser(database, 'dev@scriptorium.localhost');
const orgId = await createOrganization(database, { name: 'dev', planId: config.defaultPlan, ownerId: userId });
const key = await issueApiKey(database, { userId, orgId, defaultPlan: config.defaultPlan, actor: 'operator' });
const server = await startServer(config, { database });
handleSignals(
  {
    ...server,
    close: async () => {
      await server.close();
      await github.close();
    },
  },
  config.shutdownGraceMs,
);

const body = JSON.stringify({
  sourceLocale: 'en',
  targetLocale: 'de',
  tier: 'cheap',
  items: [
    { id: 'greeting', text: 'Hello {name}, you have {count, plural, one {# message} other {# messages}}', isIcu: true },
  ],
  style: { tone: 'friendly' },
  glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
});
const base = server.url.replace('0.0.0.0', '127.0.0.1');
process.stdout.write(
  [
    '',
    `translation service (PGlite in ${dataDir}, pseudo provider) on ${base}`,
    `  API key (shown once): ${key.apiKey}`,
    `  worker secret:        ${workerSecret}`,
    `  try: curl -s ${base}/api/v1/translate -H 'authorization: Bearer ${key.apiKey}' -H 'content-type: application/json' -d '${body}'`,
    `  docs: ${base}/  ·  ${base}/api/v1/openapi.json`,
    '',
    `local GitHub OAuth server on ${github.url} — test user: ${testUser.login} (${testUser.emails.find((e) => e.primary)!.email})`,
    `  sign in with a browser: ${base}/auth/github`,
    '  or with curl (the session cookie goes to ./dev-cookies):',
    `  sign-in: curl -s -c dev-cookies -b dev-cookies -o /dev/null -L "$(curl -s -c dev-cookies -o /dev/null -w '%{redirect_url}' ${base}/auth/github)&login=${testUser.login}"`,
    `  issue a key: curl -s -b dev-cookies -X POST ${base}/api/v1/keys`,
    `  create an organization: curl -s -b dev-cookies ${base}/api/v1/orgs -H 'content-type: application/json' -d '{"name":"acme"}'`,
    `  invite: curl -s -b dev-cookies ${base}/api/v1/orgs/<orgId>/members -H 'content-type: application/json' -d '{"email":"ana@example.com"}'`,
    `  enroll MFA: curl -s -b dev-cookies ${base}/api/v1/mfa -H 'content-type: application/json' -d '{"action":"enroll"}'`,
    `  export, delete: curl -s -b dev-cookies -X POST ${base}/api/v1/privacy/export; curl -s -b dev-cookies -X POST ${base}/api/v1/privacy/delete`,
    '',
  ].join('\n'),
);
