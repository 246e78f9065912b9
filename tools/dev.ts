// `make dev`: runs every service's dev entry point side by side (harness/src/dev/<service>.ts: development
// tooling lives in the harness, never in a service's shipped src/), with prefixed output, and stops them all on Ctrl-C.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const services = ['translation', 'ledger-node'];
const root = join(import.meta.dirname, '..');
const entries = services
  .map((name) => ({ name, entry: join(root, 'harness', 'src', 'dev', `${name}.ts`) }))
  .filter((s) => existsSync(s.entry));

if (entries.length === 0) {
  console.error('make dev: no service has a dev entry point yet (harness/src/dev/<service>.ts).');
  process.exit(2);
}

const children = entries.map(({ name, entry }) => {
  const child = spawn(process.execPath, [entry], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const prefix = (line: string) => `[${name}] ${line}`;
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) console.log(prefix(line));
    });
  }
  child.on('exit', (code, signal) => {
    console.log(prefix(`exited (${signal ?? code})`));
    if (!stopping) stopAll(code ?? 1);
  });
  return child;
});

let stopping = false;
function stopAll(code: number): void {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 5000).unref();
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
