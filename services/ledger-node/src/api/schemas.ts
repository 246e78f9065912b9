// Route parameters and query strings. The bodies other parts send or read are the protocol's
// (@scriptorium/ledger-protocol bodies.ts); records, blocks and consensus messages are checked by the
// mempool, the chain and the consensus gate inside the service.
import { z } from 'zod';

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
