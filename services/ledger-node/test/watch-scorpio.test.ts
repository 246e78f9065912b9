// The integrity watch in subscribe mode against FIWARE Scorpio 5.0.3 (NGSI-LD, built by tools/scorpio, each broker
// on its own PostgreSQL), in the default tenant and a named one: the suite of watch-suite.ts, as against the test
// broker. Scorpio keeps its subscriptions in its database, so "a restart that forgets them" deletes them while it is
// down (as a broker restored from a state without them would come back).
import {
  ensureScorpioJar,
  forgetScorpioSubscriptions,
  startScorpio,
  type TestScorpio,
} from '@scriptorium/test-support/scorpio';
import { afterAll, describe } from 'vitest';
import { defineWatchSuite, type SuiteBroker } from './watch-suite.ts';

const found = ensureScorpioJar();
const skip = 'skip' in found ? found.skip : undefined;

let started: Promise<TestScorpio[]> | undefined;
/** Three brokers for both suites (tenants keep their data apart), started once. */
const scorpios = () => {
  started ??= Promise.all([0, 1, 2].map(() => startScorpio({ jar: (found as { jar: string }).jar })));
  return started;
};
afterAll(async () => {
  for (const s of (await started) ?? []) await s.stop();
});

const asBroker = (s: TestScorpio): SuiteBroker => ({
  url: s.url,
  restartForgettingSubscriptions: () => s.restart(async () => void (await forgetScorpioSubscriptions(s.postgres.url))),
  close: async () => {}, // stopped once both suites are done
});

describe.skipIf(skip !== undefined)(`against FIWARE Scorpio 5.0.3${skip ? ` (skipped: ${skip})` : ''}`, () => {
  for (const tenant of [undefined, 'city'])
    defineWatchSuite({
      name: `subscribe mode, Scorpio, ngsi-ld, ${tenant ? `tenant ${tenant}` : 'default tenant'}`,
      api: 'ngsi-ld',
      ...(tenant ? { tenant } : {}),
      notifiesEveryChange: false,
      validators: tenant ? 2 : 4,
      brokers: async () => (await scorpios()).map(asBroker) as [SuiteBroker, SuiteBroker, SuiteBroker],
    });
});
