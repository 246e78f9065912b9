#!/usr/bin/env node
// The ledger-node CLI: `start` (default), `keygen`, `genesis`, `verify-proof`.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { genesisFileContent, verifyProof } from '@scriptorium/ledger-protocol';
import { loadConfig } from './config.ts';
import { NodeError } from './errors.ts';
import { writeNewKeyFile } from './node/files.ts';

const usage = `usage: ledger-node <command>
  start                                   run the node (configured by NODE_* variables)
  keygen [--out FILE]                     write a new key file (default $NODE_KEY_FILE or node-key.json); prints the public key
  genesis --chain-id ID [--timestamp MS] [--out FILE] KEY...   genesis block JSON from validator public keys ('-' reads keys from stdin)
  verify-proof [FILE|-]                   verify a GET /proof JSON offline; exit 0 when valid, 1 otherwise`;

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
      let data: unknown;
      try {
        data = JSON.parse(await readInput(rest[0]));
      } catch (err) {
        fail(`invalid: cannot read proof JSON (${(err as Error).message.split('\n')[0]})`, 1);
      }
      const p = data as { height?: unknown; index?: unknown; merkle_root?: unknown; record?: unknown; proof?: unknown };
      if (
        typeof p !== 'object' ||
        p === null ||
        typeof p.merkle_root !== 'string' ||
        !Array.isArray(p.proof) ||
        p.record === undefined
      )
        fail('invalid: expected {height, index, merkle_root, block_hash, record, proof}', 1);
      // With a `header` in the input (e.g. {...proofBody, header: block.header}), the record is also bound to
      // that header's merkle_root and, through block_hash, to the block itself.
      const extra = p as { header?: { merkle_root: string }; block_hash?: string };
      const ok = verifyProof({
        record: p.record,
        proof: p.proof as never,
        merkle_root: p.merkle_root as string,
        ...(extra.header && typeof extra.header === 'object'
          ? { header: extra.header, block_hash: extra.block_hash }
          : {}),
      });
      if (!ok)
        fail(
          `invalid: record does not hash to merkle_root ${String(p.merkle_root)} (height ${String(p.height)}, index ${String(p.index)})`,
          1,
        );
      process.stdout.write(
        `valid: record at height ${String(p.height)} index ${String(p.index)} hashes to merkle_root ${String(p.merkle_root)}\n`,
      );
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
