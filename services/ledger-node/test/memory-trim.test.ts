// The memory trimmer in a real process started with the validators' V8 flags: V8 keeps the pages of a burst of
// garbage resident after an ordinary collection, and the trimmer's collection gives them back.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_RUNTIME_FLAGS } from '../src/runtime-flags.ts';

const MiB = 2 ** 20;

describe('memory trimmer, in a process', () => {
  it('in a process with the validator flags, gives back the pages a burst of garbage left resident', () => {
    // The burst: 3M small objects (~400 MiB of heap) made and dropped, then an ordinary full collection.
    const script = `
      import { MemoryTrimmer } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', 'src', 'memory-trim.ts')).href)};
      await new Promise((r) => setTimeout(r, 50)); // in the event loop, as a node's checks are
      const trimmer = new MemoryTrimmer({ slackBytes: 32 * 2 ** 20 });
      trimmer.check();
      let burst = [];
      for (let i = 0; i < 3e6; i++) burst.push({ i, s: 'x' + i, a: [i] });
      burst = null;
      gc();
      const afterOrdinaryGc = process.memoryUsage().rss;
      // The check right after the burst finds the loop busy and waits; the next, after an idle moment, collects.
      const duringBurst = trimmer.check();
      await new Promise((r) => setTimeout(r, 300));
      const trim = trimmer.check();
      console.log(JSON.stringify({ afterOrdinaryGc, duringBurst, trim }));`;
    const out = execFileSync(process.execPath, [...NODE_RUNTIME_FLAGS, '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const { afterOrdinaryGc, duringBurst, trim } = JSON.parse(out) as {
      afterOrdinaryGc: number;
      duringBurst?: unknown;
      trim?: { rssAfter: number };
    };
    expect(duringBurst).toBeUndefined();
    expect(trim).toBeDefined();
    expect(afterOrdinaryGc - (trim?.rssAfter ?? afterOrdinaryGc)).toBeGreaterThan(150 * MiB);
  });
});
