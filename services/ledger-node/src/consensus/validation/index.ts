export { checkProposedBlock } from './block.ts';
export { validateCommit } from './commit.ts';
export { checkCarried, type ValidationContext, type Verdict } from './context.ts';
export { highestPrepared, validatePrePrepare } from './pre-prepare.ts';
export { validatePreparedCertificate } from './prepare.ts';
export { validateRoundChange, validateRoundChangeCore } from './round-change.ts';
