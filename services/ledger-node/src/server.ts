// `ledger-node start`: loads config, key and genesis, opens storage, starts the consensus driver,
// the HTTP(S) server and the background loops. SIGTERM/SIGINT: stop accepting, drain, exit.
import { mkdirSync } from 'node:fs';
import { loadAssets } from '@scriptorium/web-build';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from './api/app.ts';
import type { NodeConfig } from './config.ts';
import { CONSOLE_DIST } from './console/paths.ts';
import { MemoryTrimmer } from './memory-trim.ts';
import { createMetrics } from './metrics.ts';
import { attachCheckpoints } from './node/checkpoints.ts';
import { readGenesisFile, readKeyFile } from './node/files.ts';
import { LedgerNode } from './node/node.ts';
import { ledgerService } from './node/service.ts';
import { attachWatch } from './node/watch.ts';

export interface RunningNode {
  node: LedgerNode;
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export async function startNode(
  config: NodeConfig,
  logger: Logger = pino({ level: config.logLevel }),
): Promise<RunningNode> {
  const keys = readKeyFile(config.keyFile);
  const genesis = readGenesisFile(config.genesisFile);
  mkdirSync(config.dataDir, { recursive: true });
  const metrics = createMetrics({ defaultMetrics: true });
  const node = new LedgerNode({ config, keys, genesis, logger, metrics });
  const watch = attachWatch(node, metrics.registry);
  const checkpoints = attachCheckpoints(node, metrics.registry);
  const app = await buildApp({
    service: ledgerService(node, checkpoints.book),
    consoleAssets: loadAssets(CONSOLE_DIST),
    metrics,
    logger,
    clusterToken: config.clusterToken,
    debugApi: config.debugApi,
    maxBodyBytes: config.maxBodyBytes,
    rateLimit: config.rateLimit,
    tls: config.tls,
    watch,
    checkpoints,
  });
  await app.listen({ host: config.bindHost, port: config.bindPort });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.bindPort;
  node.start();
  watch.start();
  checkpoints.start();
  logger.info(
    {
      node_id: node.nodeId,
      public_key: keys.publicKey,
      port,
      height: node.chain.height,
      validator: node.isValidator(),
      // The block timing it runs with (an idle chain's pace follows the empty-block interval).
      round_timeout_ms: config.roundTimeoutMs,
      block_delay_ms: config.blockDelayMs,
      empty_block_interval_ms: config.emptyBlockIntervalMs,
    },
    'ledger node started',
  );
  let closing: Promise<void> | undefined;
  return {
    node,
    app,
    url: `${config.tls ? 'https' : 'http'}://${config.advertise.host}:${port}`,
    close() {
      closing ??= (async () => {
        await app.close();
        await checkpoints.stop();
        await watch.stop();
        await node.stop();
      })();
      return closing;
    },
  };
}

/** Runs until SIGTERM/SIGINT, then drains and exits 0. */
export async function runServer(config: NodeConfig): Promise<void> {
  const logger = pino({ level: config.logLevel });
  const running = await startNode(config, logger);
  // Memory is the process's, not a node's: the trimmer belongs to the process that runs one node.
  const metrics = running.node.metrics;
  const trimmer = new MemoryTrimmer({
    onTrim: ({ rssBefore, rssAfter, ms }) => {
      metrics.memoryTrims.inc();
      metrics.memoryTrimmedBytes.inc(Math.max(0, rssBefore - rssAfter));
      logger.info(
        {
          rss_before_mb: Math.round(rssBefore / 2 ** 20),
          rss_after_mb: Math.round(rssAfter / 2 ** 20),
          ms: Math.round(ms),
        },
        'memory trimmed: pooled heap pages given back',
      );
    },
  });
  trimmer.start();
  const shutdown = (signal: string) => {
    trimmer.stop();
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
