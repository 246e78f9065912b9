#!/usr/bin/env node
// The translation service's entry (commands: cli.ts). It first turns on Node's compile cache (in the OS temp folder,
// or NODE_COMPILE_CACHE), which keeps each module's TypeScript stripped and compiled across runs, so a pod, a
// CronJob's trigger or `keys create` starts in about two thirds of the CPU. Where the folder cannot be written, the
// cache is simply off.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./cli.ts');
