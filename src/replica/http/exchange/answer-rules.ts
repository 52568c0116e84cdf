/**
 * What a responder (responder.ts) reads of its exchange as an answer goes out, and the callbacks it
 * runs inside the fault boundary: the response's close, `send_timeout`.
 */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientRequestHead } from '../contract/decision.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';
import type { ProgressRecord } from '../contract/request-progress.ts';

/** What the responder reads of its exchange as an answer goes out. */
export interface AnswerRules {
  /** The client connection's timers of the request's location. */
  readonly timers: ClientTimers;
  /** A graceful close began: the answer says `Connection: close`. */
  readonly closing: boolean;
  /** The client connection, while the exchange has it. */
  readonly clientSocket: Socket | null;
  /** The request answered (its method and User-Agent lines for `keepalive_disable`); its `$status`. */
  readonly req: ClientRequestHead;
  readonly downstream: { readonly progress: ProgressRecord };
  /** `send_timeout` passed with the client taking nothing. */
  clientSendTimedOut(): void;
}

/** Hears the response's end, or a client that went away before it. */
export interface ResponseWatcher {
  responseClosed(): void;
  readonly clientSocket: Socket | null;
}

export function onResponseClose(watcher: ResponseWatcher): void {
  try {
    failpoint('client');
    watcher.responseClosed();
  } catch (error) {
    const socket = watcher.clientSocket;
    containFault('client', error, socket, socket);
  }
}

export function onSendTimeout(rules: AnswerRules): void {
  try {
    failpoint('timer');
    rules.clientSendTimedOut();
  } catch (error) {
    const socket = rules.clientSocket;
    containFault('timer', error, socket, socket);
  }
}
