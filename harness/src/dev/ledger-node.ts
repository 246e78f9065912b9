// `make dev`: the ledger doing its job on a laptop. 4 validators on loopback (fresh keys, a genesis in
// a temp folder, debug API on), two witnesses (`ledger-node witness`) cosigning its checkpoints, one primary and
// two federated test brokers with a few hundred entities, a local webhook receiver that prints what it gets, and a
// scripted tamper on a federated broker about every 30 s. Ctrl-C stops everything.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Block, defaultOrigin } from '@scriptorium/ledger-protocol';
import { LocalCluster } from '../local-cluster.ts';
import { LocalWitness, witnessLogOf } from '../local-witness.ts';
import {
  attribute,
  attributeName,
  attributeValue,
  entityId,
  seed,
  setAttribute,
  startTestBroker,
} from '../test-broker/index.ts';
import { startWebhookReceiver } from '../test-receivers/index.ts';

const ENTITIES = 300;
const ATTRS = 6;
const TAMPER_EVERY_MS = 30_000;
const POLL_MS = 5000;
const WEBHOOK_SECRET = 'whsec_make_dev_only_0123456789';

const primary = await startTestBroker();
const federated = [await startTestBroker(), await startTestBroker()];
for (const b of [primary, ...federated]) seed(b, { count: ENTITIES, attrs: ATTRS });

let genesis: Block | undefined;
const receiver = await startWebhookReceiver({
  secret: WEBHOOK_SECRET,
  genesis: () => genesis,
  print: (line) => console.log(`[webhook] ${line}`),
});

const CHAIN = 'scriptorium-local';
const cluster = await LocalCluster.create({
  size: 4,
  debugApi: true,
  roundTimeoutMs: 2000,
  output: 'file',
  logLevel: 'info',
  chainId: CHAIN,
  env: {
    NODE_BROKER__PRIMARY_URL: primary.url,
    NODE_BROKER__FEDERATED_URLS: federated.map((b) => b.url).join(','),
    NODE_BROKER__POLL_INTERVAL_MS: String(POLL_MS),
    NODE_NOTIFY__WEBHOOK_URLS: receiver.url,
    NODE_NOTIFY__WEBHOOK_SECRET: WEBHOOK_SECRET,
    NODE_NOTIFY__TAKEOVER_GRACE_MS: '5000',
  },
});
genesis = JSON.parse(readFileSync(cluster.genesisFile, 'utf8')) as Block;
// Two witnesses, as two broker operators would run them: each follows the chain's checkpoints (the validators' log
// keys, a quorum of them) and cosigns only what extends what it cosigned before.
const log = witnessLogOf(
  defaultOrigin(CHAIN),
  cluster.nodes.map((n) => n.keys.publicKey),
);
const witnesses = await Promise.all(
  [1, 2].map((i) =>
    LocalWitness.start({ name: `witness.local/w${i}`, dir: join(cluster.dir, `witness-${i}`), logs: [log] }),
  ),
);
await cluster.startAll({
  NODE_WITNESS__WITNESSES: JSON.stringify(
    witnesses.map((w, i) => ({ name: `w${i + 1}`, url: w.url, key: w.verifierKey })),
  ),
  NODE_WITNESS__THRESHOLD: '2',
});
const policyFlags = witnesses.map((w, i) => `--witness 'w${i + 1}=${w.verifierKey}'`).join(' ');
const first = cluster.nodes[0];
const nodeUrl = first?.url ?? '';

// Tamper: every 30 s, restore the last tampered attribute and tamper the next entity's first attribute.
const target = federated[0] as (typeof federated)[number];
let tampered: number | undefined;
let next = 0;
const tamperTimer = setInterval(() => {
  const name = attributeName(0);
  if (tampered !== undefined) {
    setAttribute(target, entityId(tampered), name, attribute('ngsi-v2', tampered, 0));
    console.log(`[tamper] restored ${entityId(tampered)} ${name} on ${target.url}`);
  }
  const i = next++ % ENTITIES;
  const value = -1000 - (attributeValue(i, 0) as number);
  setAttribute(target, entityId(i), name, attribute('ngsi-v2', i, 0, value));
  tampered = i;
  console.log(`[tamper] set ${entityId(i)} ${name} = ${value} on ${target.url}; a TAMPERED record follows`);
}, TAMPER_EVERY_MS);

console.log(`
ledger-node: the integrity ledger watching three context brokers (data and logs in ${cluster.dir})

  validators   ${cluster.nodes.map((n) => n.url).join('  ')}
  brokers      primary ${primary.url}   federated ${federated.map((b) => b.url).join('  ')}   (NGSI-v2, ${ENTITIES} entities × ${ATTRS} attributes)
  webhooks     ${receiver.url}   (signed; printed below as [webhook])
  witnesses    ${witnesses.map((w) => w.url).join('  ')}   (C2SP tlog-witness; every checkpoint cosigned by both)

Every ${TAMPER_EVERY_MS / 1000} s a federated broker is tampered ([tamper] lines). Within a poll interval (${POLL_MS / 1000} s)
the validators record a TAMPERED integrity record; once its block is final, one webhook arrives ([webhook] line
with the block height and the record's index). Then:

  curl -s ${nodeUrl}/watch                                   # what the watcher read: brokers, last pass
  curl -s ${nodeUrl}/blocks/HEIGHT                           # the finalized block holding the record
  curl -s ${nodeUrl}/proof/HEIGHT/INDEX                      # its Merkle proof
  curl -s ${nodeUrl}/proof/HEIGHT/INDEX | node services/ledger-node/src/main.ts verify-proof -   # exit 0: valid
  curl -s ${nodeUrl}/chain                                   # height, validators, quorum
  curl -s ${nodeUrl}/checkpoint                              # the latest checkpoint, signed and cosigned (C2SP)
  curl -s ${nodeUrl}/checkpoint/witnesses                    # what each witness cosigned last
  curl -s ${nodeUrl}/evidence/HEIGHT/INDEX | node services/ledger-node/src/main.ts verify-proof --genesis ${cluster.genesisFile} \\
      ${policyFlags} -   # valid only if both witnesses cosigned a checkpoint covering it
  ${nodeUrl}/ui                                              # the console: board, blocks, tamper feed, verification

The first pass notarises every observation as OK (${2 * ENTITIES * ATTRS} records over the first blocks).
Synthetic records, as before: curl -s -X POST -H 'Authorization: Bearer ${cluster.token}' '${nodeUrl}/admin/submit?count=100'
`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  clearInterval(tamperTimer);
  for (const n of cluster.nodes) await cluster.stop(n, 'SIGTERM');
  for (const w of witnesses) await w.stop('SIGTERM');
  await cluster.dispatcher.close();
  await receiver.close();
  for (const b of [primary, ...federated]) await b.close();
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
