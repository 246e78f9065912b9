export { canonicalBytes, canonicalize } from './canonical-json.ts';
