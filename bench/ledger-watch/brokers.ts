// Test brokers as their own processes, seeded with the benchmark's data (ENTITIES × ATTRS).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

export interface BrokerProcess {
  url: string;
  pid: number;
  stop(): void;
}

/** Starts `services/ledger-node/test-broker/main.ts` on `port` and resolves once it listens. */
export function startBroker(port: number, entities: number, attrs: number): Promise<BrokerProcess> {
  const child = spawn(
    process.execPath,
    [
      join(root, 'services/ledger-node/test-broker/main.ts'),
      '--port',
      String(port),
      '--entities',
      String(entities),
      '--attrs',
      String(attrs),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve({ url: JSON.parse(line).url, pid: child.pid as number, stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`test broker exited ${code}`)));
  });
}
