// CPU profiles of another process, for the benchmarks that say where a service's time goes: the process is started
// with `--inspect=127.0.0.1:PORT`, and the bench starts and stops the engine's sampling profiler around exactly the requests
// it wants to see (the DevTools protocol over the inspector's WebSocket), so start-up and other requests stay out.
// The profiles are Chrome's `.cpuprofile` (open them in DevTools or speedscope); `summarize` folds them into the
// self and total time of each function and of each place (this repository's folders, each npm package, node's own).

/** The `.cpuprofile` document (the DevTools protocol's `Profiler.Profile`). */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A connection to a process's inspector that can profile it. */
export interface Profiler {
  start(): Promise<void>;
  stop(): Promise<CpuProfile>;
  close(): void;
}

/**
 * Connects to the inspector of the process listening on `port` (started with `--inspect=127.0.0.1:PORT`).
 * @example const p = await connectProfiler(9230, 100); await p.start(); await work(); const profile = await p.stop();
 */
export async function connectProfiler(port: number, samplingIntervalUs = 100): Promise<Profiler> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener('error', reject, { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (!call) return;
    waiting.delete(message.id!);
    if (message.error) call.reject(new Error(`inspector: ${message.error.message}`));
    else call.resolve(message.result);
  });
  const post = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve: resolve as (result: unknown) => void, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: samplingIntervalUs });
  return {
    start: () => post('Profiler.start'),
    stop: async () => (await post<{ profile: CpuProfile }>('Profiler.stop')).profile,
    close: () => ws.close(),
  };
}

/**
 * The profile with its script URLs relative to the checkouts it ran from (`file://<root>/x` → `<as>x`), so a committed
 * profile names no machine's folders. `roots`: each checkout's absolute root and what it becomes ('' or 'baseline/').
 */
export function relativeUrls(profile: CpuProfile, roots: [root: string, as: string][]): CpuProfile {
  const prefixes = roots.map(([root, as]) => [`file://${root.replace(/\/$/, '')}/`, as] as const);
  const relative = (url: string) => {
    for (const [prefix, as] of prefixes) if (url.startsWith(prefix)) return as + url.slice(prefix.length);
    return url;
  };
  return {
    ...profile,
    nodes: profile.nodes.map((n) => ({ ...n, callFrame: { ...n.callFrame, url: relative(n.callFrame.url) } })),
  };
}

/** Where a function lives: this repository's folder, an npm package, node's own code, or the engine itself (GC, the program). */
export function placeOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /(?:^|\/)((?:services|packages)\/[^/]+\/(?:src\/)?[^/]+)/.exec(url);
  return own ? own[1]!.replace(/\.ts$/, '') : url;
}

/** Milliseconds are means per profile (the profiles are of the same work, repeated). */
export interface ProfileSummary {
  profiles: number;
  /** Sampled milliseconds the main thread was busy (the profile less `(idle)`). */
  totalMs: number;
  /** Sampled milliseconds the main thread waited (for PostgreSQL, the network). */
  idleMs: number;
  /** Self time per place, largest first. */
  byPlace: { place: string; selfMs: number; share: number }[];
  /** Self and total (self plus callees) time of the busiest functions. */
  byFunction: { fn: string; selfMs: number; totalMs: number }[];
}

/**
 * Folds profiles of the same work, repeated, into the mean time per place and per function; `top` functions by total.
 * A busy sample's time is the wall time to the next one, capped at `capUs`: on a busy machine the process is
 * descheduled between two samples, and that wait is not this function's CPU.
 */
export function summarize(profiles: CpuProfile[], top = 40, capUs = 500): ProfileSummary {
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const places = new Map<string, number>();
  let all = 0;
  let idle = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const name = (id: number) => {
      const f = byId.get(id)!.callFrame;
      const file = f.url.replace(/^.*\/(node_modules|services|packages)\//, '$1/');
      return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
    };
    profile.samples.forEach((id, i) => {
      const delta = profile.timeDeltas[i + 1] ?? 0;
      const f = byId.get(id)!.callFrame;
      if (f.functionName === '(idle)') {
        idle += delta / 1000;
        return;
      }
      const ms = Math.min(delta, capUs) / 1000;
      all += ms;
      const place = placeOf(f.url, f.functionName);
      places.set(place, (places.get(place) ?? 0) + ms);
      self.set(name(id), (self.get(name(id)) ?? 0) + ms);
      // Total: every distinct function on the sample's stack once (recursion counted once).
      const seen = new Set<string>();
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
        const key = name(n);
        if (seen.has(key)) continue;
        seen.add(key);
        total.set(key, (total.get(key) ?? 0) + ms);
      }
    });
  }
  const r = (x: number) => Math.round((x / Math.max(profiles.length, 1)) * 100) / 100;
  return {
    profiles: profiles.length,
    totalMs: r(all),
    idleMs: r(idle),
    byPlace: [...places]
      .sort((a, b) => b[1] - a[1])
      .map(([place, ms]) => ({ place, selfMs: r(ms), share: Math.round((1000 * ms) / all) / 10 })),
    byFunction: [...total]
      .filter(([fn]) => !fn.startsWith('(root)') && !fn.startsWith('(program)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, ms]) => ({ fn, selfMs: r(self.get(fn) ?? 0), totalMs: r(ms) })),
  };
}
