export { buildCrds } from './crds.ts';
export { structuralProblems, toStructuralSchema } from './json-schema.ts';
export { renderCrdFiles } from './render.ts';
