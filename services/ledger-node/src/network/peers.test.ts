import { formatPeerSpec, type PeerSpec, parsePeerSpec } from '@scriptorium/ledger-protocol';
import { describe, expect, it } from 'vitest';
import { PeerRegistry } from './peers.ts';

const key = (c: string) => c.repeat(64);
const spec = (id: string, host: string, port: number, k: string): PeerSpec => ({
  nodeId: id,
  host,
  port,
  publicKey: key(k),
});

describe('peer spec', () => {
  it('parses and formats round trip', () => {
    const text = `n-1@10.0.0.5:8000|${key('a')}`;
    const parsed = parsePeerSpec(text);
    expect(parsed).toEqual({ nodeId: 'n-1', host: '10.0.0.5', port: 8000, publicKey: key('a') });
    expect(formatPeerSpec(parsed as PeerSpec)).toBe(text);
  });
  it.each(['', 'n@h:1', `n@h|${key('a')}`, `n@h:99999|${key('a')}`, `@h:1|${key('a')}`, `n@h:1|${key('g')}`])(
    'refuses %j',
    (text) => {
      expect(typeof parsePeerSpec(text)).toBe('string');
    },
  );
});

describe('peer registry', () => {
  it('keys by public key and updates a re-announced address in place', () => {
    const reg = new PeerRegistry(spec('self', '127.0.0.1', 1, 'a'), [spec('b', '127.0.0.1', 2, 'b')]);
    expect(reg.mergeAnnouncement([spec('b', '10.0.0.2', 3, 'b'), spec('c', '127.0.0.1', 4, 'c')])).toEqual({
      added: 1,
      updated: 1,
    });
    expect(reg.get(key('b'))).toMatchObject({ host: '10.0.0.2', port: 3 });
    expect(reg.size).toBe(2);
    // Own key is never overwritten by a peer's claim.
    reg.mergeAnnouncement([spec('evil', '6.6.6.6', 6, 'a')]);
    expect(reg.specs()[0]).toBe(`self@127.0.0.1:1|${key('a')}`);
    expect(reg.size).toBe(2);
  });

  it('takes hearsay only for unknown keys: a stale copy passed around cannot undo a move', () => {
    const reg = new PeerRegistry(spec('self', '127.0.0.1', 1, 'a'), []);
    reg.mergeAnnouncement([spec('b', '10.0.0.2', 2, 'b')]);
    reg.mergeAnnouncement([spec('b', '10.0.0.3', 3, 'b')]);
    // c's registry still holds b's old address: c's own spec is first-hand, b's is hearsay.
    expect(reg.mergeAnnouncement([spec('c', '10.0.0.4', 4, 'c'), spec('b', '10.0.0.2', 2, 'b')])).toEqual({
      added: 1,
      updated: 0,
    });
    expect(reg.get(key('b'))).toMatchObject({ host: '10.0.0.3', port: 3 });
    // A pulled answer counts as first-hand only when its first spec carries the key of the peer asked.
    expect(reg.mergeAnnouncement([spec('b', '10.0.0.9', 9, 'b')], key('c'))).toEqual({ added: 0, updated: 0 });
    expect(reg.mergeAnnouncement([spec('c', '10.0.0.5', 5, 'c')], key('c'))).toEqual({ added: 0, updated: 1 });
    expect(reg.get(key('c'))).toMatchObject({ host: '10.0.0.5', port: 5 });
  });

  it('forgets a peer outside the validator set unreachable for the grace period; hearsay does not bring it back, its own announcement does', () => {
    const reg = new PeerRegistry(spec('self', '127.0.0.1', 1, 'a'), [
      spec('b', '127.0.0.1', 2, 'b'),
      spec('c', 'retired.ns.svc', 3, 'c'),
    ]);
    const active = new Set([key('a'), key('b')]);
    // Unreachable, but within the grace period; and an active validator away for long is kept.
    reg.noteReach(key('b'), false, 0);
    reg.noteReach(key('c'), false, 1000);
    expect(reg.forgetUnreachable(active, 30_999, 30_000)).toEqual([]);
    // Reached once in between: the clock starts again.
    reg.noteReach(key('c'), true, 20_000);
    reg.noteReach(key('c'), false, 25_000);
    expect(reg.forgetUnreachable(active, 54_999, 30_000)).toEqual([]);
    expect(reg.forgetUnreachable(active, 55_000, 30_000).map((p) => p.nodeId)).toEqual(['c']);
    expect(reg.others().map((p) => p.nodeId)).toEqual(['b']);
    // A peer still listing it (hearsay) adds nothing; its own announcement (first spec) does.
    expect(reg.mergeAnnouncement([spec('b', '127.0.0.1', 2, 'b'), spec('c', 'retired.ns.svc', 3, 'c')])).toEqual({
      added: 0,
      updated: 0,
    });
    expect(reg.get(key('c'))).toBeUndefined();
    expect(reg.mergeAnnouncement([spec('c', 'back.ns.svc', 3, 'c')], key('c')).added).toBe(1);
    expect(reg.get(key('c'))?.host).toBe('back.ns.svc');
    // A failure noted for a key it does not hold starts no clock.
    reg.noteReach(key('d'), false, 0);
    expect(reg.forgetUnreachable(active, 1e9, 30_000).map((p) => p.nodeId)).toEqual([]);
    expect(reg.get(key('d'))).toBeUndefined();
  });
});
