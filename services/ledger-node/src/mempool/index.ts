export { Mempool, type MempoolOptions } from './mempool.ts';
