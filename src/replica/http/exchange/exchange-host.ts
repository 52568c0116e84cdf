/** What every exchange of one listener shares: the listener's groups, callbacks and counts. */
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientInputRules, Decision } from '../contract/decision.ts';
import type { ExchangeEvents } from '../contract/exchange-events.ts';
import type { UpstreamHost } from '../upstream/upstream-group.ts';

/** What every exchange of one listener shares. */
export interface ExchangeHost<D extends Decision> extends UpstreamHost {
  /** Hears how each exchange went. */
  readonly events: ExchangeEvents<D>;
  /** The hook's rules for client input (log lines about client faults), if it has any. */
  readonly clientInput: ClientInputRules<D> | null;
  /** True once a graceful close began: answers say `Connection: close`. */
  readonly closing: boolean;
  /** Requests currently held by a delay. */
  held: number;
  /** Called when a held or forwarded exchange ends (for graceful close). */
  exchangeEnded(): void;
  /** The address's default server's client timers (for answers the hook gave none). */
  readonly clientTimers: ClientTimers;
}
