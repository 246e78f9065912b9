#!/usr/bin/env node
// Runs the local GitHub-compatible OAuth server until SIGTERM. Settings from the environment:
//   PORT (default 8080), HOST (default 0.0.0.0), OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET (or OAUTH_CLIENT_SECRET_FILE),
//   USERS (JSON array of users; default: one test user, octo-dev).
import { readFileSync } from 'node:fs';
import { DEFAULT_USERS, type LocalGitHubUser, startLocalGitHub } from './server.ts';

const env = process.env;
const secretFile = env.OAUTH_CLIENT_SECRET_FILE;
const clientSecret = env.OAUTH_CLIENT_SECRET ?? (secretFile ? readFileSync(secretFile, 'utf8').trim() : undefined);
if (!env.OAUTH_CLIENT_ID || !clientSecret) {
  process.stderr.write('OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET (or _FILE) are required\n');
  process.exit(1);
}
const server = await startLocalGitHub({
  clientId: env.OAUTH_CLIENT_ID,
  clientSecret,
  users: env.USERS ? (JSON.parse(env.USERS) as LocalGitHubUser[]) : DEFAULT_USERS,
  host: env.HOST ?? '0.0.0.0',
  port: Number(env.PORT ?? 8080),
});
process.stdout.write(
  `local GitHub OAuth server on ${server.url} (users: ${server.users.map((u) => u.login).join(', ')})\n`,
);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => void server.close().then(() => process.exit(0)));
