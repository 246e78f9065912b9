// The ledger-node CLI (entered through main.ts): `start` (default), `witness`, `keygen`, `note-key`, `genesis`,
// `verify-proof`.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  ALG_COSIGNATURE_V1,
  ALG_ED25519,
  Block,
  blockHash,
  formatVerifierKey,
  genesisFileContent,
  isValidKeyName,
  ORIGIN_PATTERN,
  parseWitnessFlag,
  verifyEvidence,
  type WitnessRequirement,
  witnessPolicy,
} from '@scriptorium/ledger-protocol';
import { loadConfig } from './config.ts';
import { NodeError } from './errors.ts';
import { readKeyFile, writeNewKeyFile } from './node/files.ts';

const usage = `usage: ledger-node <command>
  start                                   run the node (configured by NODE_* variables)
  witness                                 run a C2SP tlog-witness (configured by WITNESS_* variables)
  keygen [--out FILE]                     write a new key file (default $NODE_KEY_FILE or node-key.json); prints the public key
  note-key (--origin ORIGIN | --witness NAME) (--key FILE | PUBLIC_KEY)
                                          print a C2SP note verifier key: a validator's log key (type 0x01, named by the
                                          checkpoints' origin: what witnesses are given) or a witness's cosignature key
                                          (type 0x04: what readers give --witness)
  genesis --chain-id ID [--timestamp MS] [--out FILE] KEY...   genesis block JSON from validator public keys ('-' reads keys from stdin)
  verify-proof --genesis FILE [FILE|-]    verify offline a GET /evidence JSON (light evidence) against the genesis file;
                                          also a GET /proof JSON, a chain (JSON array of blocks from 0) or {proof, chain}
                                          (without --genesis, a chain's block 0 is taken as given); exit 0 when valid,
                                          1 otherwise
      [--witness NAME=KEY ...] [--witness-threshold K] [--origin ORIGIN]
                                          a witness policy: the evidence must carry a checkpoint covering its block,
                                          cosigned by K (default all) of these witnesses (KEY: tlog-cosignature verifier
                                          key), signed by a quorum of the validators (origin default
                                          scriptorium.dev/ledger/<chain id>)
  backup                                  upload what the node (BACKUP__NODE_URL) finalized since the last backup to
                                          S3 (BACKUP__ENDPOINT, BACKUP__BUCKET, BACKUP__PREFIX): segments, then the manifest
  restore                                 verify the backup (every block from genesis, NODE_GENESIS_FILE) and write it
                                          into NODE_DATA_DIR; refuses a backup that does not verify; skips a data
                                          directory that already holds a chain
  backup-verify                           the restore drill: restore the latest backup into scratch, verify it, and
                                          compare its tip with the live node's block at that height
  (the backup commands print one JSON line; exit 0 when done, 1 when refused, with the height and the reason)`;

function fail(line: string, code = 2): never {
  process.stderr.write(`${line}\n`);
  process.exit(code);
}

async function readInput(path: string | undefined): Promise<string> {
  if (path && path !== '-') return readFileSync(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: string[]): Promise<void> {
  const [command = 'start', ...rest] = argv;
  switch (command) {
    case 'start': {
      const { runServer } = await import('./server.ts');
      await runServer(loadConfig(process.env));
      return;
    }
    case 'witness': {
      const { loadWitnessConfig } = await import('./witness/config.ts');
      const { runWitness } = await import('./witness/server.ts');
      await runWitness(loadWitnessConfig(process.env));
      return;
    }
    case 'note-key': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { origin: { type: 'string' }, witness: { type: 'string' }, key: { type: 'string' } },
      });
      const { origin, witness } = values;
      if ((origin === undefined) === (witness === undefined)) fail(`note-key: give --origin or --witness\n${usage}`);
      if (origin !== undefined && !ORIGIN_PATTERN.test(origin)) fail('note-key: --origin is not an origin line');
      if (witness !== undefined && !isValidKeyName(witness))
        fail('note-key: --witness is not a key name (no spaces or +)');
      const publicKey = values.key !== undefined ? readKeyFile(values.key).publicKey : positionals[0]?.toLowerCase();
      if (!publicKey || !/^[0-9a-f]{64}$/.test(publicKey)) fail('note-key: give --key FILE or a 64-hex public key');
      process.stdout.write(
        `${origin !== undefined ? formatVerifierKey(origin, ALG_ED25519, publicKey) : formatVerifierKey(witness as string, ALG_COSIGNATURE_V1, publicKey)}\n`,
      );
      return;
    }
    case 'keygen': {
      const { values } = parseArgs({ args: rest, options: { out: { type: 'string' } } });
      const out = values.out ?? process.env.NODE_KEY_FILE ?? 'node-key.json';
      try {
        const pair = writeNewKeyFile(out);
        process.stdout.write(`${pair.publicKey}\n`);
      } catch (err) {
        fail(`keygen: cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      return;
    }
    case 'genesis': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { 'chain-id': { type: 'string' }, timestamp: { type: 'string' }, out: { type: 'string' } },
      });
      const chainId = values['chain-id'];
      if (!chainId) fail('genesis: --chain-id is required');
      let keys = positionals.flatMap((p) => p.split(','));
      if (keys.length === 1 && keys[0] === '-') keys = (await readInput('-')).split(/[\s,]+/);
      keys = keys.map((k) => k.trim().toLowerCase()).filter(Boolean);
      if (keys.length === 0) fail('genesis: give at least one validator public key');
      const bad = keys.find((k) => !/^[0-9a-f]{64}$/.test(k));
      if (bad) fail(`genesis: not a 64-hex public key: ${bad.slice(0, 80)}`);
      const timestamp = values.timestamp === undefined ? Date.now() : Number(values.timestamp);
      if (!Number.isSafeInteger(timestamp) || timestamp < 0)
        fail('genesis: --timestamp must be milliseconds since the epoch');
      let json: string;
      try {
        json = genesisFileContent(keys, chainId, timestamp);
      } catch (err) {
        fail(`genesis: ${(err as Error).message}`);
      }
      if (values.out) writeFileSync(values.out, json);
      else process.stdout.write(json);
      return;
    }
    case 'verify-proof': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          genesis: { type: 'string' },
          witness: { type: 'string', multiple: true },
          'witness-threshold': { type: 'string' },
          origin: { type: 'string' },
        },
      });
      if (positionals.length > 1) fail(`verify-proof: one input at most\n${usage}`);
      const witnesses = witnessRequirement(values.witness ?? [], values['witness-threshold'], values.origin);
      let genesis: Block | undefined;
      if (values.genesis !== undefined) {
        let text: string;
        try {
          text = readFileSync(values.genesis, 'utf8');
        } catch (err) {
          fail(`verify-proof: cannot read --genesis ${values.genesis}: ${(err as NodeJS.ErrnoException).code ?? ''}`);
        }
        let parsed: ReturnType<typeof Block.safeParse>;
        try {
          parsed = Block.safeParse(JSON.parse(text));
        } catch {
          fail(`verify-proof: --genesis ${values.genesis} is not JSON`);
        }
        if (!parsed.success) fail(`verify-proof: --genesis ${values.genesis} is not a block`);
        genesis = parsed.data;
      }
      let data: unknown;
      try {
        data = JSON.parse(await readInput(positionals[0]));
      } catch (err) {
        fail(`invalid: cannot read JSON (${(err as Error).message.split('\n')[0]})`, 1);
      }
      // Light evidence (GET /evidence) against the pinned genesis; a GET /proof body (with `header` also bound to
      // that block), a chain (blocks from 0: each block's link, body and finality certificate from the set its
      // predecessors make active) or {proof, chain}: the same verdict the browser console and the kubectl plugin
      // give (@scriptorium/ledger-protocol's verifyEvidence).
      const report = verifyEvidence(data, { ...(genesis ? { genesis } : {}), ...(witnesses ? { witnesses } : {}) });
      if (!report.ok) fail(`invalid: ${report.lines.at(-1) ?? 'unreadable'}`, 1);
      const pinned = genesis ? ` (genesis ${blockHash(genesis.header)})` : '';
      process.stdout.write(`valid${pinned}: ${report.lines.join('; ')}\n`);
      return;
    }
    case 'backup':
    case 'restore':
    case 'backup-verify': {
      const { runBackupCommand } = await import('./backup/commands.ts');
      process.exitCode = await runBackupCommand(command, process.env);
      return;
    }
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${usage}\n`);
      return;
    default:
      fail(`unknown command ${JSON.stringify(command)}\n${usage}`);
  }
}

/** The reader's witness policy from `--witness NAME=KEY` (repeated), `--witness-threshold K`, `--origin`. */
function witnessRequirement(
  flags: string[],
  threshold: string | undefined,
  origin: string | undefined,
): WitnessRequirement | undefined {
  if (flags.length === 0) {
    if (threshold !== undefined) fail('verify-proof: --witness-threshold without --witness');
    if (origin !== undefined) fail('verify-proof: --origin is for a witness policy: give --witness too');
    return undefined;
  }
  const entries = flags.map((f) => {
    const entry = parseWitnessFlag(f);
    if (typeof entry === 'string') fail(`verify-proof: ${entry}`);
    return entry;
  });
  if (threshold !== undefined && !/^[1-9][0-9]{0,2}$/.test(threshold))
    fail('verify-proof: --witness-threshold is a whole number from 1');
  const policy = witnessPolicy(entries, threshold === undefined ? undefined : Number(threshold));
  if (typeof policy === 'string') fail(`verify-proof: ${policy}`);
  if (origin !== undefined && !ORIGIN_PATTERN.test(origin)) fail('verify-proof: --origin is not an origin line');
  return { policy, ...(origin !== undefined ? { origin } : {}) };
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof NodeError) fail(err.message);
  fail(`ledger-node: ${(err as Error).stack ?? String(err)}`, 1);
});
