// Operator ledger support benchmark (operator/src/ledger/): what a LedgerCluster reconcile spends on
// - the cluster PKI: CA creation, node certificate issuance, the renewal check (run on every reconcile per validator),
// - the pure membership planner for N = 4, 10, 100 validators,
// - LedgerNodeClient GET /chain against one real ledger node process on loopback (HTTP and HTTPS with our PKI).
// Writes bench/results/operator-ledger.json. Single process, sequential calls: figures are per-core costs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@scriptorium/harness/local-cluster';
import {
  certificateNeedsRenewal,
  createClusterCa,
  issueNodeCertificate,
  LedgerNodeClient,
  type MembershipInput,
  planMembership,
} from '@scriptorium/operator/ledger';

const results: Record<string, unknown> = { startedAt: new Date().toISOString(), loadAverageAtStart: loadavg()[0] };

async function rate(name: string, seconds: number, fn: () => unknown | Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5; i++) await fn(); // warm-up
  const deadline = performance.now() + seconds * 1000;
  const start = performance.now();
  let n = 0;
  while (performance.now() < deadline && n < 5_000_000) {
    await fn();
    n++;
  }
  const perSecond = n / ((performance.now() - start) / 1000);
  console.log(`${name}: ${perSecond.toFixed(perSecond < 100 ? 1 : 0)}/s (${n} in ${seconds} s)`);
  results[name] = Math.round(perSecond * 10) / 10;
  return perSecond;
}

const now = new Date();
const ca = await createClusterCa({ commonName: 'bench CA', now });
const names = ['ledger-a-v0.prod.svc', 'ledger-a-v0.prod.svc.cluster.local'];
const node = await issueNodeCertificate(ca, { commonName: 'ledger-a-v0', dnsNames: names, now });
await rate('pki_create_ca_per_s', 2, () => createClusterCa({ commonName: 'bench CA', now }));
await rate('pki_issue_node_cert_per_s', 2, () => issueNodeCertificate(ca, { commonName: 'n', dnsNames: names, now }));
await rate('pki_renewal_check_per_s', 2, () =>
  certificateNeedsRenewal(node.certPem, { now, dnsNames: names, caPem: ca.certPem }),
);

const key = (i: number) => i.toString(16).padStart(64, '0');
for (const n of [4, 10, 100]) {
  const desired = Array.from({ length: n + 1 }, (_, i) => ({ name: `v${i}`, publicKey: key(i) }));
  const input: MembershipInput = {
    desired,
    members: desired.map((d) => ({ ...d, ready: true, height: 1000 })),
    chain: { height: 1000, validators: desired.slice(0, n).map((d) => d.publicKey) },
    now,
  };
  if (planMembership(input).type !== 'submit') throw new Error('bench: expected an ADD plan');
  await rate(`planner_n${n}_plans_per_s`, 1, () => planMembership(input));
}

const dir = mkdtempSync(join(tmpdir(), 'bench-operator-ledger-'));
try {
  const tlsPair = await issueNodeCertificate(ca, { commonName: 'n0', dnsNames: ['127.0.0.1'], now });
  writeFileSync(join(dir, 'ca.crt'), ca.certPem);
  writeFileSync(join(dir, 'n0.crt'), tlsPair.certPem);
  writeFileSync(join(dir, 'n0.key'), tlsPair.keyPem, { mode: 0o600 });
  for (const mode of ['http', 'https'] as const) {
    const cluster = await LocalCluster.create({
      size: 1,
      dir: join(dir, mode),
      ...(mode === 'https'
        ? {
            tls: {
              mode: 'server' as const,
              caFile: join(dir, 'ca.crt'),
              ca: Buffer.from(ca.certPem),
              certFor: () => ({ certFile: join(dir, 'n0.crt'), keyFile: join(dir, 'n0.key') }),
            },
          }
        : {}),
    });
    const client = new LedgerNodeClient({ caPem: ca.certPem });
    try {
      await cluster.startAll();
      const url = (cluster.nodes[0] as { url: string }).url;
      await rate(`client_chain_${mode}_per_s`, 3, () => client.chain(url));
    } finally {
      await client.close();
      await cluster.stopAll();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

results.loadAverageAtEnd = loadavg()[0];
const out = join(import.meta.dirname, '..', 'results', 'operator-ledger.json');
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${out} (load average ${String(results.loadAverageAtStart)} → ${String(results.loadAverageAtEnd)})`);
