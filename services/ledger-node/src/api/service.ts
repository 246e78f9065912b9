// What the HTTP layer needs from the node. Implemented by node/service.ts; the routes know nothing else.
import type { ChainStatus, ConsolePeersBody, PeerSpec, ValidatorChange } from '@scriptorium/ledger-protocol';
import type { z } from 'zod';
import type { ReadyBody } from './schemas.ts';

export interface LedgerService {
  /** Gate for POST /consensus: checks shape and signature (throws NodeError 400), enqueues (throws 503 when full). */
  submitConsensus(body: unknown): void;
  /** Records gossiped by a peer or observed locally; throws NodeError 400 on a malformed record. */
  /** `relay` false when the records came from a peer's gossip (the origin already sent them to every peer). */
  addRecords(records: unknown[], relay?: boolean): { accepted: number };
  addChanges(changes: ValidatorChange[]): { accepted: number };
  /** A finalized block pushed by a peer; throws NodeError 400 when its certificate does not verify. */
  /** True when the block at this height is already stored (lets POST /block skip parsing). */
  hasHeight(height: number): boolean;
  receiveBlock(body: unknown): Promise<{ height: number; status: 'applied' | 'known' | 'ahead' }>;
  mergePeers(specs: PeerSpec[]): { added: number; updated: number };
  listPeers(): string[];
  chainStatus(): ChainStatus;
  getBlock(height: number): unknown | undefined;
  /** The block's JSON text as stored, when the node can answer without serializing it (else use getBlock). */
  getBlockJson?(height: number): string | undefined;
  getProof(height: number, index: number): unknown | undefined;
  /** GET /evidence: the record's light evidence (LightEvidence), undefined when the block or record does not exist. */
  getEvidence(height: number, index: number): unknown | undefined;
  readiness(): Omit<z.infer<typeof ReadyBody>, 'status' | 'error'>;
  adminSubmit(count: number): { accepted: number };
  /** GET /ui/peers: this node, its round, and its registry's peers (read-only, for the console's board). */
  consolePeers(): ConsolePeersBody;
  /** The origins (`scheme://host:port`) of the registry's peers: what the console's page may fetch from. */
  peerOrigins(): string[];
  adminValidator(change: ValidatorChange): { accepted: number };
}
