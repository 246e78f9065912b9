// Key and genesis files. The key file is JSON {public_key, private_key} written with mode 0600;
// the genesis file is block 0 itself (JSON), so every node can check it is on the same chain.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { Block, checkGenesis } from '@scriptorium/ledger-protocol';
import { generateKeyPair, type KeyPair, keyFileContent, parseKeyFile } from '@scriptorium/ledger-protocol/keys';
import { NodeError } from '../errors.ts';

/** Writes a fresh key pair to `path` (0600, refuses to overwrite) and returns it. */
export function writeNewKeyFile(path: string): KeyPair {
  const pair = generateKeyPair();
  writeFileSync(path, keyFileContent(pair), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return pair;
}

export function readKeyFile(path: string): KeyPair {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new NodeError('config', `cannot read key file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    return parseKeyFile(text);
  } catch (err) {
    throw new NodeError('config', `key file ${path}: ${(err as Error).message}`);
  }
}

export function readGenesisFile(path: string): Block {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new NodeError(
      'config',
      `cannot read genesis file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'not JSON'}`,
    );
  }
  const parsed = Block.safeParse(data);
  if (!parsed.success)
    throw new NodeError('config', `genesis file ${path} is not a block: ${parsed.error.issues[0]?.message}`);
  const check = checkGenesis(parsed.data);
  if (!check.ok)
    throw new NodeError(
      'config',
      `genesis file ${path} is not a valid block 0 (height 0, ADD changes only, matching root): ${check.reason}`,
    );
  return parsed.data;
}
