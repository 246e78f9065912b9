// Envelope schemas of the HTTP bodies. Records, blocks and consensus messages are checked by
// the chain and consensus schemas inside the service.
import { z } from 'zod';
import { peerSpecSchema } from '../network/peer-spec.ts';

export const publicKeyHex = z.string().regex(/^[0-9a-f]{64}$/, { message: 'expected a 64-hex public key' });

export const validatorChangeSchema = z.strictObject({
  action: z.enum(['ADD', 'REMOVE']),
  validator: publicKeyHex,
});

export const mempoolBody = z.object({ records: z.array(z.unknown()).max(100_000) });
export const membershipBody = z.object({ changes: z.array(validatorChangeSchema).min(1).max(64) });
export const peersBody = z.object({ peers: z.array(peerSpecSchema).max(1024) });

export const heightParam = z.object({
  index: z
    .string()
    .regex(/^\d{1,15}$/, { message: 'expected a block index' })
    .transform(Number),
});
export const proofParams = z.object({
  height: z
    .string()
    .regex(/^\d{1,15}$/, { message: 'expected a height' })
    .transform(Number),
  index: z
    .string()
    .regex(/^\d{1,15}$/, { message: 'expected a record index' })
    .transform(Number),
});
export const submitQuery = z.object({
  count: z
    .string()
    .regex(/^\d{1,6}$/, { message: 'expected an integer 1..100000' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(100_000))
    .default(1),
});
