// Key and genesis files. The key file is JSON {public_key, private_key} written with mode 0600;
// the genesis file is block 0 itself (JSON), so every node can check it is on the same chain.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { Block, buildGenesis, checkBody } from '../chain/index.ts';
import { generateKeyPair, type KeyPair, publicKeyOf } from '../crypto/index.ts';
import { NodeError } from '../errors.ts';

const keyFileSchema = z.object({
  public_key: z.string().regex(/^[0-9a-f]{64}$/),
  private_key: z.string().regex(/^[0-9a-f]{64}$/),
});

/** Writes a fresh key pair to `path` (0600, refuses to overwrite) and returns it. */
export function writeNewKeyFile(path: string): KeyPair {
  const pair = generateKeyPair();
  writeFileSync(path, `${JSON.stringify({ public_key: pair.publicKey, private_key: pair.privateKey })}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
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
  let parsed: z.infer<typeof keyFileSchema>;
  try {
    parsed = keyFileSchema.parse(JSON.parse(text));
  } catch {
    throw new NodeError('config', `key file ${path} is not {public_key, private_key} in hex`);
  }
  if (publicKeyOf(parsed.private_key) !== parsed.public_key)
    throw new NodeError('config', `key file ${path}: public key does not match the private key`);
  return { publicKey: parsed.public_key, privateKey: parsed.private_key };
}

/** Builds the genesis block JSON from the initial validator keys. */
export function genesisJson(keys: string[], chainId: string, timestamp: number): string {
  return `${JSON.stringify(buildGenesis(keys, chainId, timestamp), null, 2)}\n`;
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
  const g = parsed.data;
  const body = checkBody(g);
  if (
    g.header.height !== 0 ||
    !body.ok ||
    g.validator_changes.length === 0 ||
    g.validator_changes.some((c) => c.action !== 'ADD')
  )
    throw new NodeError(
      'config',
      `genesis file ${path} is not a valid block 0 (height 0, ADD changes only, matching root)`,
    );
  return g;
}
