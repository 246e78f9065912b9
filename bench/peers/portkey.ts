// Portkey's AI gateway (@portkey-ai/gateway, installed by bench/peers/build.sh outside the repository) as its own
// process on loopback, and the request that routes it to an OpenAI-compatible upstream: its docs' headers
// `x-portkey-provider: openai` and `x-portkey-custom-host: <base URL>`, the upstream's key as the bearer token.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const portkeyVersion = (installDir: string): string =>
  (
    JSON.parse(readFileSync(join(installDir, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

/**
 * Starts the gateway's Node server (`build/start-server.js --port=N --headless`: no demo console, no log stream,
 * as a server deployment runs it) and waits for `GET /` to answer. `log`: a file for its output.
 */
export async function startPortkey(opts: {
  installDir: string;
  port: number;
  log: string;
  nodeArgs?: string[];
}): Promise<ChildProcess> {
  const main = join(opts.installDir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), main, `--port=${opts.port}`, '--headless'], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(opts.log, { flags: 'a' });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  for (let i = 0; ; i++) {
    const up = await fetch(`http://127.0.0.1:${opts.port}/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return child;
    if (i >= 150 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the Portkey gateway did not answer within 30 s (log: ${opts.log})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The chat-completions request through the gateway to `upstreamBaseUrl` (ending in /v1). */
export function portkeyRequest(port: number, upstreamBaseUrl: string, apiKey: string, body: string) {
  return {
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': upstreamBaseUrl,
    },
    body,
  };
}
