#!/usr/bin/env node
// kubectl-scriptorium's entry (the plugin itself: cli.ts). It first turns on Node's compile cache (in the OS temp
// folder, or NODE_COMPILE_CACHE), which keeps each module's TypeScript stripped and compiled across runs, so every
// `kubectl scriptorium …` after the first starts in about half the CPU. Where the folder cannot be written, the cache
// is simply off.
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { runPlugin } = await import('./cli.ts');
runPlugin(process.argv.slice(2));
