import {
  type Block,
  blockHash,
  type LightEvidence,
  lightEvidence,
  membershipBelow,
  membershipEvidence,
  type Verify,
  verifyLightEvidence,
  verifySignature,
} from '@scriptorium/ledger-protocol';

/** The light evidence a node holding `chain` serves for record `index` of block `height` (what GET /evidence builds). */
export function evidenceFrom(chain: readonly Block[], height: number, index: number): LightEvidence | null {
  const block = chain[height];
  const genesis = chain[0];
  if (!block || !genesis) return null;
  return lightEvidence(
    blockHash(genesis.header),
    membershipBelow(block.header, (h) => membershipEvidence(chain[h] as Block)),
    block,
    index,
  );
}

/**
 * Evidence: every record of every block of every chain verifies from block 0 alone with light evidence (the set
 * each seal is judged against derived from the membership blocks only), as a light client would see it.
 */
export function checkEvidence(
  chains: ReadonlyMap<string, readonly Block[]>,
  verify: Verify = verifySignature,
): string[] {
  const errors: string[] = [];
  for (const [node, chain] of chains) {
    const genesis = chain[0];
    if (!genesis) continue;
    for (const block of chain.slice(1)) {
      for (let i = 0; i < block.records.length; i++) {
        const report = verifyLightEvidence(evidenceFrom(chain, block.header.height, i), genesis, verify);
        if (!report.ok) {
          errors.push(`${node}: evidence of record ${i} of block ${block.header.height}: ${report.lines.at(-1)}`);
          break;
        }
      }
    }
  }
  return errors;
}
