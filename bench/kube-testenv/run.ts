// bench/kube-testenv: how long a test control plane takes to start and stop on this machine, and
// how much memory it holds — the figures integration-test budgets are planned with.
//   BENCH=kube-testenv make bench        (RUNS=3 by default)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestControlPlane } from '@scriptorium/kube-testenv';

const runs = Math.max(1, Math.min(10, Number(process.env.RUNS ?? 3)));

function rssMiB(dir: string): number {
  let kib = 0;
  for (const pid of readFileSync(join(dir, 'pids'), 'utf8').split('\n').filter(Boolean)) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    kib += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return Math.round(kib / 1024);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function measure(withControllerManager: boolean) {
  const start: number[] = [];
  const stop: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const plane = await startTestControlPlane({ withControllerManager });
    start.push(performance.now() - t0);
    // Let the controllers settle (bootstrap RBAC, service accounts) before reading memory.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    rss.push(rssMiB(plane.dir));
    const t1 = performance.now();
    await plane.stop();
    stop.push(performance.now() - t1);
  }
  return {
    withControllerManager,
    runs,
    startMsMedian: Math.round(median(start)),
    startMsMax: Math.round(Math.max(...start)),
    stopMsMedian: Math.round(median(stop)),
    rssMiBMedian: median(rss),
  };
}

const results = [await measure(false), await measure(true)];
for (const r of results) {
  console.log(
    `${r.withControllerManager ? 'etcd + apiserver + controller-manager' : 'etcd + apiserver'}: ` +
      `start ${r.startMsMedian} ms (max ${r.startMsMax}), stop ${r.stopMsMedian} ms, RSS ${r.rssMiBMedian} MiB (median of ${r.runs})`,
  );
}
const out = join(import.meta.dirname, '..', 'results', 'kube-testenv.json');
writeFileSync(out, `${JSON.stringify({ part: 'kube-testenv', date: new Date().toISOString(), results }, null, 2)}\n`);
console.log(`wrote ${out}`);
