// The integrity watch in subscribe mode against the project's test broker, NGSI-v2 and NGSI-LD, in the default
// tenant and a named one (the suite: watch-suite.ts).
import { startTestBroker, type TestBroker } from '@scriptorium/harness/test-broker';
import { defineWatchSuite, type SuiteBroker } from './watch-suite.ts';

const testBroker = async (api: 'ngsi-v2' | 'ngsi-ld'): Promise<SuiteBroker> => {
  const broker: TestBroker = await startTestBroker({ api });
  return {
    url: broker.url,
    restartForgettingSubscriptions: () => broker.restart({ forgetSubscriptions: true }),
    close: () => broker.close(),
  };
};

for (const api of ['ngsi-v2', 'ngsi-ld'] as const)
  for (const tenant of [undefined, 'city'])
    defineWatchSuite({
      name: `subscribe mode, test broker, ${api}, ${tenant ? `tenant ${tenant}` : 'default tenant'}`,
      api,
      ...(tenant ? { tenant } : {}),
      notifiesEveryChange: true,
      validators: tenant ? 2 : 4,
      brokers: async () => [await testBroker(api), await testBroker(api), await testBroker(api)],
    });
