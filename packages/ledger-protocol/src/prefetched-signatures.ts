// Browsers verify Ed25519 natively only through WebCrypto, which is asynchronous, while the one verifier of this
// package is synchronous (pure, so every verifier — node, CLI, plugin, console — reaches the same verdict the same
// way). `judgeWithPrefetchedSignatures` bridges the two without a second verifier: it runs the judgement once with a
// signature check that only records what it is asked (and says yes), checks every recorded signature with the
// asynchronous primitive at once, then runs the same judgement again with those answers. The verdict is the second
// run's; a signature the first run did not ask for, or one the asynchronous primitive could not check, goes to the
// synchronous primitive. In the console this replaces about forty @noble verifications (and @noble's first-use
// tables) by native ones.
import type { Verify } from './finality.ts';
import { fromHex, toHex } from './hex.ts';

/** An asynchronous Ed25519 check with the arguments of `Verify`; rejecting means "could not check here". */
export type VerifyAsync = (publicKeyHex: string, message: Uint8Array, signatureHex: string) => Promise<boolean>;

const PUBLIC_KEY = /^[0-9a-f]{64}$/;
const SIGNATURE = /^[0-9a-f]{128}$/;

/**
 * The judgement `judge(verify)`, with its signatures checked beforehand by `verifyAsync` (see the file's comment).
 * @example await judgeWithPrefetchedSignatures((v) => verifyLightEvidence(ev, genesis, v), webCryptoVerify, nobleVerify)
 */
export async function judgeWithPrefetchedSignatures<R>(
  judge: (verify: Verify) => R,
  verifyAsync: VerifyAsync,
  fallback: Verify,
): Promise<R> {
  const key = (publicKeyHex: string, message: Uint8Array, signatureHex: string) =>
    `${publicKeyHex}:${signatureHex}:${toHex(message)}`;
  const asked = new Map<string, [string, Uint8Array, string]>();
  judge((publicKeyHex, message, signatureHex) => {
    asked.set(key(publicKeyHex, message, signatureHex), [publicKeyHex, message, signatureHex]);
    return true;
  });
  const answers = new Map<string, boolean>();
  await Promise.all(
    [...asked].map(async ([k, [publicKeyHex, message, signatureHex]]) => {
      try {
        answers.set(k, await verifyAsync(publicKeyHex, message, signatureHex));
      } catch {
        // left to the synchronous primitive
      }
    }),
  );
  return judge(
    (publicKeyHex, message, signatureHex) =>
      answers.get(key(publicKeyHex, message, signatureHex)) ?? fallback(publicKeyHex, message, signatureHex),
  );
}

type ImportedKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
/** WebCrypto takes bytes over an ArrayBuffer of their own (never a SharedArrayBuffer). */
const owned = (bytes: Uint8Array): Uint8Array<ArrayBuffer> =>
  bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);

const importedKeys = new Map<string, Promise<ImportedKey>>();

/**
 * Ed25519 verification by WebCrypto (`crypto.subtle`, in browsers and in Node), with the same input rules as the
 * synchronous primitives: anything but 64 hex characters of key and 128 of signature is false. Rejects where the
 * platform has no Ed25519 in WebCrypto.
 */
export async function webCryptoVerify(
  publicKeyHex: string,
  message: Uint8Array,
  signatureHex: string,
): Promise<boolean> {
  if (!PUBLIC_KEY.test(publicKeyHex) || !SIGNATURE.test(signatureHex)) return false;
  let imported = importedKeys.get(publicKeyHex);
  if (!imported) {
    imported = crypto.subtle.importKey('raw', owned(fromHex(publicKeyHex)), { name: 'Ed25519' }, false, ['verify']);
    importedKeys.set(publicKeyHex, imported);
    imported.catch(() => importedKeys.delete(publicKeyHex));
  }
  return crypto.subtle.verify({ name: 'Ed25519' }, await imported, owned(fromHex(signatureHex)), owned(message));
}
