// The V8 flags every validator process starts with (the image's ENTRYPOINT and LocalCluster's processes; a
// test keeps the two the same).
//
// --max-semi-space-size: V8 grows the young generation with the allocation rate up to 64 MiB a semi-space (128 MiB
// committed) and keeps it: a watcher's first pass over 100k entities (2M records built, gossiped and applied)
// leaves every node with 128 MiB of young generation that a steady pass never needs. 8 MiB (16 MiB committed) caps
// that; the live heap of a node watching 100k entities is ~100 MiB (bench/README.md, ledger-watch).
export const NODE_RUNTIME_FLAGS = ['--max-semi-space-size=8'] as const;
