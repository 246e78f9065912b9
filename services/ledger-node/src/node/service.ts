// The node as the HTTP layer sees it (api/service.ts's LedgerService): the open reads (/chain, /blocks,
// /proof, /ready, /peers) answered from the node's state, and the writes handed to the part that owns them.
import { type ChainStatus, type ConsolePeersBody, quorumSize } from '@scriptorium/ledger-protocol';
import type { LedgerService } from '../api/service.ts';
import type { CheckpointBook } from '../checkpoint/book.ts';
import type { LedgerNode } from './node.ts';

/** GET /chain (spec section 2): the node's tip and the active set of the next height. */
export function chainStatus(node: LedgerNode): ChainStatus {
  const validators = node.currentValidators();
  return {
    node_id: node.nodeId,
    height: node.chain.height,
    latest_hash: node.chain.tipHash,
    validators: validators.length,
    quorum: quorumSize(validators.length),
    is_validator: validators.includes(node.keys.publicKey),
    validator_keys: [...validators],
  };
}

/**
 * The HTTP layer's view of a node; with the checkpoint book, a record's evidence carries the latest checkpoint that
 * covers its block (witnessed when the policy is met by one).
 */
export function ledgerService(node: LedgerNode, checkpoints?: CheckpointBook): LedgerService {
  return {
    submitConsensus: (body) => node.submitConsensus(body),
    addRecords: (records, relay) => node.intake.addRecords(records, relay),
    addChanges: (changes) => node.intake.addChanges(changes),
    hasHeight: (height) => node.hasHeight(height),
    receiveBlock: (body) => node.receiveBlock(body),
    mergePeers: (specs) => node.mergePeers(specs),
    listPeers: () => node.peers.specs(),
    chainStatus: () => chainStatus(node),
    getBlock: (height) => node.chain.get(height),
    getBlockJson: (height) => node.chain.getJson(height),
    getProof: (height, index) => node.chain.proof(height, index),
    getEvidence: (height, index) => {
      const evidence = node.chain.evidence(height, index);
      const checkpoint = evidence && checkpoints?.evidence(height);
      return evidence && checkpoint ? { ...evidence, checkpoint } : evidence;
    },
    readiness: () => ({ ...node.sync.readiness(), sync: node.sync.state() }),
    adminSubmit: (count) => node.intake.addSynthetic(count),
    adminValidator: (change) => node.intake.addChanges([change]),
    consolePeers: () => consolePeers(node),
    peerOrigins: () => peerOrigins(node),
  };
}

/** `host:port` as a URL authority (IPv6 hosts in brackets). */
const authority = (host: string, port: number) =>
  `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;

/** GET /ui/peers: the registry as the console's board reads it. */
export function consolePeers(node: LedgerNode): ConsolePeersBody {
  return {
    node_id: node.nodeId,
    public_key: node.keys.publicKey,
    round: node.driver.round,
    peers: node.peers.others().map((p) => ({
      node_id: p.nodeId,
      public_key: p.publicKey,
      address: authority(p.host, p.port),
      height_seen: node.sync.heightOf(p.publicKey),
    })),
  };
}

/** The peers' origins, for the console page's connect-src (a cluster runs one scheme: this node's). */
export function peerOrigins(node: LedgerNode): string[] {
  const scheme = node.config.tls ? 'https' : 'http';
  return node.peers.others().map((p) => `${scheme}://${authority(p.host, p.port)}`);
}
