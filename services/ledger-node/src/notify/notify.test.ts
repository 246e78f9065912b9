// Webhook signatures (Stripe's scheme), the RFC 5424 format read back by a strict parser, octet
// framing, the responsibility rule and the durable queue (reopen, torn tail).
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deframe, parseRfc5424, sampleEvent } from '@scriptorium/harness/test-receivers';
import { type Block, verifyLightEvidence } from '@scriptorium/ledger-protocol';
import vectors from '@scriptorium/ledger-protocol/test-vectors' with { type: 'json' };
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryQueue, deliveryKey, type QueueItem } from './queue.ts';
import { deliverAt, deliveryRank, lowerRanked } from './responsibility.ts';
import { signWebhook, verifyWebhook } from './signature.ts';
import { formatTamperSyslog, octetFrame, parseSyslogTarget } from './syslog.ts';

describe('webhook signature', () => {
  const body = JSON.stringify(sampleEvent());
  const t = 1_764_000_000;

  it('verifies what was signed, and nothing else', () => {
    const header = signWebhook('whsec_test', t, body);
    expect(header).toMatch(/^t=1764000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook('whsec_test', header, body, t + 10)).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhook('whsec_other', header, body, t).ok).toBe(false);
    expect(verifyWebhook('whsec_test', header, `${body} `, t)).toEqual({ ok: false, reason: 'signature mismatch' });
    expect(verifyWebhook('whsec_test', header, body, t + 301)).toEqual({
      ok: false,
      reason: 'timestamp outside tolerance',
    });
    expect(verifyWebhook('whsec_test', header.replace('t=1764000000', 't=1764000001'), body, t).ok).toBe(false);
    expect(verifyWebhook('whsec_test', undefined, body, t).ok).toBe(false);
    expect(verifyWebhook('whsec_test', 'garbage', body, t).ok).toBe(false);
  });

  it('accepts any of several v1 values (secret rotation)', () => {
    const old = signWebhook('old', t, body).split(',')[1];
    const header = `${signWebhook('new', t, body)},${old}`;
    expect(verifyWebhook('old', header, body, t).ok).toBe(true);
    expect(verifyWebhook('new', header, body, t).ok).toBe(true);
  });

  it('the signed payload is "<t>.<raw body>" with HMAC-SHA256 (a receiver can rebuild it from the docs)', async () => {
    const { createHmac } = await import('node:crypto');
    const expected = createHmac('sha256', 'k').update(`${t}.${body}`).digest('hex');
    expect(signWebhook('k', t, body)).toBe(`t=${t},v1=${expected}`);
  });
});

describe('syslog format', () => {
  it('is RFC 5424: PRI 82 (security, critical), version 1, MSGID TAMPER, structured data with the ids', () => {
    const event = sampleEvent('e'.repeat(64), 'urn:x:"quoted]\\back');
    const raw = formatTamperSyslog(event, {
      hostname: 'node-1',
      procId: '42',
      time: Date.UTC(2026, 10, 24, 6, 0, 0, 123),
    });
    const m = parseRfc5424(raw);
    expect(m).toMatchObject({
      facility: 10,
      severity: 2,
      version: 1,
      timestamp: '2026-11-24T06:00:00.123Z',
      hostname: 'node-1',
      appName: 'scriptorium-ledger',
      procId: '42',
      msgId: 'TAMPER',
    });
    const sd = m.structuredData['tamper@32473'] as Record<string, string>;
    expect(sd).toEqual({
      record_id: 'e'.repeat(64),
      chain_id: 'dev',
      height: String(event.height),
      index: String(event.index),
      block_hash: event.block_hash,
      verdict: 'TAMPERED',
      broker: 'https://fed1.example:1026',
      entity: 'urn:x:"quoted]\\back',
      entity_type: 'Sensor',
      attribute: 'temperature',
      merkle_root: event.evidence.proof.merkle_root,
      evidence: JSON.stringify(event.evidence),
    });
    // The evidence survives the escaping and verifies from the genesis alone.
    expect(verifyLightEvidence(JSON.parse(sd.evidence as string), vectors.chain[0] as Block).ok).toBe(true);
    expect(m.msg).toContain('TAMPERED urn:x:"quoted]\\back temperature');
    expect(raw).toContain('\ufeff');
  });

  it('a message that would not fit the limit (one UDP datagram) names the evidence by path instead', () => {
    const event = sampleEvent();
    const time = Date.UTC(2026, 10, 27);
    const full = formatTamperSyslog(event, { time });
    const cut = formatTamperSyslog(event, { time, maxBytes: Buffer.byteLength(full) - 1 });
    const sd = parseRfc5424(cut).structuredData['tamper@32473'] as Record<string, string>;
    expect(sd.evidence).toBeUndefined();
    expect(sd.evidence_path).toBe(`/evidence/${event.height}/${event.index}`);
    expect(formatTamperSyslog(event, { time, maxBytes: Buffer.byteLength(full) })).toBe(full);
  });

  it('header fields stay printable ASCII; an empty one is the NILVALUE', () => {
    const raw = formatTamperSyslog(sampleEvent(), { hostname: 'bad host\n', procId: '' });
    const m = parseRfc5424(raw);
    expect(m.hostname).toBe('badhost');
    expect(m.procId).toBe('-');
  });

  it('octet-counting frames (RFC 6587) split back exactly, also across chunk boundaries and with UTF-8', () => {
    const a = formatTamperSyslog(sampleEvent('1'.repeat(64), 'urn:é:ü'));
    const b = formatTamperSyslog(sampleEvent('2'.repeat(64)));
    const stream = Buffer.concat([octetFrame(a), octetFrame(b)]);
    for (const cut of [1, 5, 17, stream.length - 3]) {
      const out: string[] = [];
      const rest = deframe(stream.subarray(0, cut), out);
      const rest2 = deframe(Buffer.concat([rest, stream.subarray(cut)]), out);
      expect(out).toEqual([a, b]);
      expect(rest2.length).toBe(0);
    }
  });

  it('parses syslog targets', () => {
    expect(parseSyslogTarget('udp://siem.example:514')).toEqual({ protocol: 'udp', host: 'siem.example', port: 514 });
    expect(parseSyslogTarget('tcp://[::1]:6514')).toEqual({ protocol: 'tcp', host: '::1', port: 6514 });
    expect(parseSyslogTarget('http://x:1')).toHaveProperty('error');
    expect(parseSyslogTarget('udp://x:70000')).toHaveProperty('error');
  });
});

describe('responsibility rule', () => {
  const set = ['k0', 'k1', 'k2', 'k3'];
  it('ranks the proposer 0 and the others by distance after it', () => {
    expect(set.map((k) => deliveryRank(set, 'k2', k))).toEqual([2, 3, 0, 1]);
    expect(deliveryRank(set, 'k2', 'stranger')).toBeUndefined();
    expect(lowerRanked(set, 'k2', 2)).toEqual(['k2', 'k3']);
    expect(lowerRanked(set, 'k2', 0)).toEqual([]);
    expect(deliverAt(1000, 2, 5000)).toBe(11_000);
  });
  it('a proposer no longer in the set: every validator is a backup, in set order', () => {
    expect(set.map((k) => deliveryRank(set, 'gone', k))).toEqual([1, 2, 3, 4]);
    expect(lowerRanked(set, 'gone', 3)).toEqual(['k0', 'k1']);
  });
});

describe('delivery queue', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const item = (id: string, sink = 'webhook:http://x/'): QueueItem => ({
    key: deliveryKey(sink, id),
    sink,
    event: sampleEvent(id.padEnd(64, '0')),
    notBefore: 0,
    askFirst: [],
  });

  it('keeps added, not-done deliveries and the cursor across reopen; a torn tail is cut', () => {
    dir = mkdtempSync(join(tmpdir(), 'queue-'));
    const q = DeliveryQueue.open(dir);
    q.add([item('a'), item('b'), item('c')], 5);
    q.add([item('a')]); // a repeat is ignored
    q.done(item('b').key);
    q.close();
    appendFileSync(join(dir, 'notify-queue.wal'), Buffer.from([0, 0, 0, 9, 0, 0, 1, 0, 42]));
    const again = DeliveryQueue.open(dir);
    expect(again.pending().map((i) => i.event.id[0])).toEqual(['a', 'c']);
    expect(again.cursor).toBe(5);
    again.done(item('a').key);
    again.done(item('c').key);
    again.close();
    expect(DeliveryQueue.open(dir).size).toBe(0);
  });
});
