// The V8 flags and the allocator settings every validator process starts with (the image's ENTRYPOINT and ENV,
// and LocalCluster's processes; a test keeps them the same).
//
// --expose-gc: the memory trimmer (memory-trim.ts) runs a last-resort collection once an allocation burst is over
// (the event loop idle), the only way to make V8 give its pooled heap pages back to the OS and shrink a young
// generation the burst grew (up to 128 MiB committed) back to 1 MiB. It takes the `gc` global at start.
//
// No cap on the young generation (--max-semi-space-size=8 until 2026-11-27): it made every scavenge-heavy path pay
// while it ran, to save memory that the idle trimmer now gives back. Alternating runs of 4 validators
// (bench/results/ledger-runtime-settings.json): closed-loop saturation 23,050 → 29,440 records/s, a watcher's first
// pass over 100k entities 229 → 176 s, and the steady RSS per node 198–220 → 186–215 MB.
export const NODE_RUNTIME_FLAGS = ['--expose-gc'] as const;

// GLIBC_TUNABLES: glibc's malloc keeps what a burst frees (per-thread arenas, a trim threshold that grows with
// the largest free) and the node's native allocations (HTTP bodies, crypto, the WAL's buffers) come in bursts.
// Two arenas, a fixed 128 KiB trim threshold (the heap's top trimmed past it) and a fixed 32 KiB mmap threshold:
// blocks from 32 KiB up, the 64 KiB socket reads of a listing page among them, are mapped on their own and
// unmapped on free instead of fragmenting the heap. With a 128 KiB mmap threshold, after a first pass over 20k
// entities, 91 → 45 MiB of malloc heap and a node's steady RSS 228–249 → 175–188 MB; at 100k entities the steady
// peak is 236–249 MB per node with 32 KiB and everything since (bench/README.md, ledger-watch, runs N–P).
export const NODE_RUNTIME_ENV = {
  GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=32768',
} as const;
