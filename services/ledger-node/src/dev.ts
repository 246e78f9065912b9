// `make dev`: 4 validators on loopback with fresh keys and a genesis in a temp folder, debug API on.
// Prints their URLs and a curl line that submits records. Ctrl-C stops them.
import { LocalCluster } from './cluster/local-cluster.ts';

const cluster = await LocalCluster.create({
  size: 4,
  debugApi: true,
  roundTimeoutMs: 2000,
  output: 'file',
  logLevel: 'info',
});
await cluster.startAll();
const first = cluster.nodes[0];
console.log(`ledger-node: 4 validators running (data and logs in ${cluster.dir})`);
for (const n of cluster.nodes)
  console.log(
    `  ${n.nodeId}  ${n.url}  /chain /blocks/{i} /proof/{h}/{i} /metrics  key ${n.keys.publicKey.slice(0, 16)}…`,
  );
console.log('submit 100 synthetic records, then read the chain:');
console.log(`  curl -s -X POST -H 'Authorization: Bearer ${cluster.token}' '${first?.url}/admin/submit?count=100'`);
console.log(`  curl -s ${first?.url}/chain`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  for (const n of cluster.nodes) await cluster.stop(n, 'SIGTERM');
  await cluster.dispatcher.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
for (const n of cluster.nodes) {
  n.process?.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${n.nodeId} exited (${signal ?? code}); stopping the others`);
      void stop();
    }
  });
}
