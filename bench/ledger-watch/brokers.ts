// Test brokers as their own processes, seeded with the benchmark's data (ENTITIES × ATTRS).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The test broker's command-line entry (the harness's `./test-broker/main` export). */
const BROKER_MAIN = fileURLToPath(import.meta.resolve('@scriptorium/harness/test-broker/main'));

export interface BrokerProcess {
  url: string;
  pid: number;
  stop(): void;
}

/** Starts the test broker's `main.ts` (harness/src/test-broker) on `port` and resolves once it listens. */
export function startBroker(port: number, entities: number, attrs: number): Promise<BrokerProcess> {
  const child = spawn(
    process.execPath,
    [BROKER_MAIN, '--port', String(port), '--entities', String(entities), '--attrs', String(attrs)],
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
