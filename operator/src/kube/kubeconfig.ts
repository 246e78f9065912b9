import { existsSync, readFileSync } from 'node:fs';
import type https from 'node:https';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

/** What KubeClient needs of a kubeconfig: `@kubernetes/client-node`'s KubeConfig has this shape too. */
export interface KubeAccess {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}

type Tls = { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean };

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Raw = Record<string, unknown>;
const named = (list: unknown, name: unknown): Raw | undefined =>
  (Array.isArray(list) ? (list as Raw[]) : []).find((e) => e?.name === name);

/**
 * A kubeconfig with static credentials (CA, client certificate, bearer token or token file, basic auth), read
 * without `@kubernetes/client-node` (whose import alone costs the process ~60 MB of RSS). The service account token
 * file is read again at most once a minute (tokens are rotated). Exec plugins and auth providers are not handled:
 * `loadStatic` answers undefined and the caller falls back to client-node's loader.
 */
class StaticAccess implements KubeAccess {
  readonly #server: string;
  readonly #tls: Tls;
  readonly #token: string | undefined;
  readonly #tokenFile: string | undefined;
  readonly #basic: string | undefined;
  #fileToken: { value: string; at: number } | undefined;

  constructor(server: string, tls: Tls, auth: { token?: string; tokenFile?: string; basic?: string }) {
    this.#server = server;
    this.#tls = tls;
    this.#token = auth.token;
    this.#tokenFile = auth.tokenFile;
    this.#basic = auth.basic;
  }

  getCurrentCluster(): { server: string } {
    return { server: this.#server };
  }

  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    Object.assign(opts, this.#tls);
    let token = this.#token;
    if (this.#tokenFile) {
      const now = Date.now();
      if (!this.#fileToken || now - this.#fileToken.at > 60_000) {
        this.#fileToken = { value: readFileSync(this.#tokenFile, 'utf8').trim(), at: now };
      }
      token = this.#fileToken.value;
    }
    if (token) opts.headers = { ...opts.headers, authorization: `Bearer ${token}` };
    if (this.#basic) opts.auth = this.#basic;
  }
}

function fromFile(path: string): KubeAccess | undefined {
  const doc = parse(readFileSync(path, 'utf8')) as Raw;
  const context = named(doc.contexts, doc['current-context'])?.context as Raw | undefined;
  const cluster = named(doc.clusters, context?.cluster)?.cluster as Raw | undefined;
  const user = (named(doc.users, context?.user)?.user ?? {}) as Raw;
  if (!context || !cluster || typeof cluster.server !== 'string') throw new Error(`${path}: no current context`);
  if (user.exec || user['auth-provider'] || cluster['proxy-url']) return undefined; // client-node handles these
  const base = dirname(path);
  const read = (data: unknown, file: unknown): Buffer | undefined => {
    if (typeof data === 'string') return Buffer.from(data, 'base64');
    if (typeof file === 'string') return readFileSync(isAbsolute(file) ? file : join(base, file));
    return undefined;
  };
  const tls = {
    ca: read(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: read(user['client-certificate-data'], user['client-certificate']),
    key: read(user['client-key-data'], user['client-key']),
    ...(cluster['insecure-skip-tls-verify'] === true ? { rejectUnauthorized: false } : {}),
  };
  const tokenFile = typeof user.tokenFile === 'string' ? user.tokenFile : undefined;
  const basic =
    typeof user.username === 'string'
      ? `${user.username}:${typeof user.password === 'string' ? user.password : ''}`
      : undefined;
  return new StaticAccess(cluster.server, tls, {
    token: typeof user.token === 'string' ? user.token : undefined,
    tokenFile: tokenFile && !isAbsolute(tokenFile) ? join(base, tokenFile) : tokenFile,
    basic,
  });
}

/**
 * The same search order as client-node's `loadFromDefault` (one file only, no merging of several KUBECONFIG
 * paths): `path`, then `~/.kube/config`, then the in-cluster service account. Undefined = use client-node.
 */
export function loadStatic(path: string | undefined, env = process.env): KubeAccess | undefined {
  if (path) return path.includes(':') ? undefined : fromFile(path);
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return fromFile(home);
  const host = env.KUBERNETES_SERVICE_HOST;
  if (host && existsSync(join(SA_DIR, 'token'))) {
    const server = `https://${host.includes(':') ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT ?? '443'}`;
    return new StaticAccess(server, { ca: readFileSync(join(SA_DIR, 'ca.crt')) }, { tokenFile: join(SA_DIR, 'token') });
  }
  return undefined;
}
