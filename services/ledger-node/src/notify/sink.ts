// A notification channel. `deliver` resolves once the channel accepted the event (a 2xx from a
// webhook, a datagram or stream write handed to the kernel for syslog) and throws otherwise; the
// dispatcher retries. `name` identifies the sink in the durable queue, so it must be stable across
// restarts (derived from the configured URL or target, never from a secret).
import type { TamperEvent } from './event.ts';

export interface Sink {
  readonly name: string;
  deliver(event: TamperEvent): Promise<void>;
  close(): Promise<void>;
}

export class DeliveryError extends Error {
  readonly sink: string;
  constructor(sink: string, detail: string) {
    super(`${sink}: ${detail}`);
    this.name = 'DeliveryError';
    this.sink = sink;
  }
}
