// `make dev` (through tools/dev.ts): the translation service on embedded PGlite (in .dev/translation/) with the pseudo
// provider, and a local GitHub-compatible OAuth server to sign in through. One story: the OAuth server's test user
// owns the organization `dev` (created once, kept across restarts), and the API key printed at start is a key of that
// organization; so a newcomer who signs in as the test user sees the organization the key translates for, with its
// usage. Prints curl lines for the whole path (sign in, a key, an invite, MFA, export, erasure) that work as printed.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_USERS, startLocalGitHub } from '@scriptorium/github-oauth-local';
import {
  createOrganization,
  type Database,
  ensureUser,
  handleSignals,
  issueApiKey,
  loadConfig,
  migrate,
  openDatabase,
  startServer,
} from '@scriptorium/translation';

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
const testEmail = testUser.emails.find((e) => e.primary && e.verified)!.email;
const DEV_ORG = 'dev';

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

/** The test user's organization `dev` (the oldest, when earlier runs made more), created on the first run. */
async function ensureDevOrganization(db: Database, ownerId: string, planId: string): Promise<string> {
  const [org] = await db.query<{ id: string }>(
    `SELECT o.id FROM organizations o JOIN memberships m ON m.org_id = o.id
      WHERE m.user_id = $1 AND m.role = 'owner' AND o.name = $2 AND NOT o.personal
      ORDER BY o.created_at LIMIT 1`,
    [ownerId, DEV_ORG],
  );
  return org?.id ?? createOrganization(db, { name: DEV_ORG, planId, ownerId });
}

// The user the test user's first sign-in links to (same verified e-mail), or the same user again after a restart.
const userId = await ensureUser(database, testEmail);
const orgId = await ensureDevOrganization(database, userId, config.defaultPlan);
const key = await issueApiKey(database, {
  userId,
  orgId,
  defaultPlan: config.defaultPlan,
  actor: 'operator',
  name: 'make dev',
});
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
// Absolute paths, so the lines work from any folder.
const jar = join(dirname(dataDir), 'cookies.txt');
// This process's own Node (24, which runs TypeScript), whatever `node` the newcomer's shell finds.
const totp = `${process.execPath} ${join(import.meta.dirname, 'totp.ts')}`;
const session = `curl -s -b ${jar}`;
const json = "-H 'content-type: application/json'";
process.stdout.write(
  [
    '',
    `translation service (PGlite in ${dataDir}, pseudo provider) on ${base}`,
    `  web app: ${base}/  ·  OpenAPI: ${base}/api/v1/openapi.json  ·  worker secret: ${workerSecret}`,
    '',
    `test user ${testUser.login} (${testEmail}) owns the organization "${DEV_ORG}" (${orgId})`,
    `  API key of "${DEV_ORG}" (shown once): ${key.apiKey}`,
    `  try: curl -s ${base}/api/v1/translate -H 'authorization: Bearer ${key.apiKey}' ${json} -d '${body}'`,
    '',
    `local GitHub OAuth server on ${github.url} — sign in as ${testUser.login}:`,
    `  with a browser: ${base}/ → Sign in with GitHub → Sign in as ${testUser.login}; the Overview shows "${DEV_ORG}" and its usage`,
    `  or with curl (the session cookie goes to ${jar}):`,
    `  sign-in: curl -s -c ${jar} -b ${jar} -o /dev/null -L "$(curl -s -c ${jar} -o /dev/null -w '%{redirect_url}' ${base}/auth/github)&login=${testUser.login}"`,
    `  you and your organizations: ${session} ${base}/api/v1/me`,
    `  usage of "${DEV_ORG}" (the try line's tokens included): ${session} ${base}/api/v1/orgs/${orgId}/usage`,
    `  issue a key: ${session} ${base}/api/v1/keys ${json} -d '{"orgId":"${orgId}","name":"mine"}'`,
    `  invite: ${session} ${base}/api/v1/orgs/${orgId}/members ${json} -d '{"email":"ana@example.com"}'`,
    `  enroll MFA: ${session} ${base}/api/v1/mfa ${json} -d '{"action":"enroll"}'`,
    `  verify MFA (SECRET from the enroll answer): ${session} ${base}/api/v1/mfa ${json} -d '{"action":"verify","code":"'$(${totp} SECRET)'"}'`,
    `  export: ${session} -X POST ${base}/api/v1/privacy/export -o scriptorium-export.json`,
    `  delete: ${session} -X POST ${base}/api/v1/privacy/delete`,
    '',
  ].join('\n'),
);
