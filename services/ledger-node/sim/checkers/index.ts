export { EquivocationChecker } from './equivocation.ts';
export { checkEvidence, evidenceFrom } from './evidence.ts';
export { HandOffChecker } from './hand-off.ts';
export { checkLiveness } from './liveness.ts';
export { checkProofs } from './proofs.ts';
export { checkSafety } from './safety.ts';
export { checkSeals } from './seals.ts';
