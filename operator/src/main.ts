// The operator's entry: `node operator/src/main.ts` (the image's ENTRYPOINT). It first turns on Node's compile cache
// (in the OS temp folder, or NODE_COMPILE_CACHE), which keeps each module's TypeScript stripped and compiled across
// runs; where the folder cannot be written (a read-only root filesystem without a writable /tmp), it is simply off.
// Then the process itself (start.ts).
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./start.ts');
