#!/usr/bin/env node
// The ledger-node command (`start`, `keygen`, `genesis`, `verify-proof`: cli.ts). It first turns on Node's compile
// cache (in the OS temp folder, or NODE_COMPILE_CACHE), which keeps each module's TypeScript stripped and compiled
// across runs: a one-shot command such as `verify-proof` then starts in a fraction of the time. Where the folder
// cannot be written, the cache is simply off.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./cli.ts');
