// The ledger-node CLI (entered through main.ts): `start` (default), `keygen`, `genesis`, `verify-proof`.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Block, blockHash, genesisFileContent, verifyEvidence } from '@scriptorium/ledger-protocol';
import { loadConfig } from './config.ts';
import { NodeError } from './errors.ts';
import { writeNewKeyFile } from './node/files.ts';

const usage = `usage: ledger-node <command>
  start                                   run the node (configured by NODE_* variables)
  keygen [--out FILE]                     write a new key file (default $NODE_KEY_FILE or node-key.json); prints the public key
  genesis --chain-id ID [--timestamp MS] [--out FILE] KEY...   genesis block JSON from validator public keys ('-' reads keys from stdin)
  verify-proof --genesis FILE [FILE|-]    verify offline a GET /evidence JSON (light evidence) against the genesis file;
                                          also a GET /proof JSON, a chain (JSON array of blocks from 0) or {proof, chain}
                                          (without --genesis, a chain's block 0 is taken as given); exit 0 when valid,
                                          1 otherwise
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
        options: { genesis: { type: 'string' } },
      });
      if (positionals.length > 1) fail(`verify-proof: one input at most\n${usage}`);
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
      const report = verifyEvidence(data, genesis ? { genesis } : {});
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

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof NodeError) fail(err.message);
  fail(`ledger-node: ${(err as Error).stack ?? String(err)}`, 1);
});
