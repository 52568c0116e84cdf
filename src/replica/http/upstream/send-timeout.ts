/**
 * `proxy_send_timeout` while a request body goes out, from its last write. As in nginx it counts only
 * while the server accepts nothing (the client's body is paused until the socket drains); a wait for
 * more of the client's body is not the server's fault.
 */
import type { Socket } from 'node:net';
import type { ClientBodyStream } from '../contract/client-request.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';

/** What the timer reads and tells. */
export interface SendWatcher {
  /** The client's body: paused while the server's socket is full. */
  readonly body: ClientBodyStream;
  /** Whether the request still goes out (false: the timer's end means nothing). */
  readonly stillSending: boolean;
  readonly clientSocket: Socket | null;
  /** The server accepted nothing of the request for the timeout. */
  sendTimedOut(): void;
}

function onTimer(timeout: SendTimeout): void {
  try {
    failpoint('timer');
    timeout.fired();
  } catch (error) {
    const socket = timeout.watcher.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

export class SendTimeout {
  readonly watcher: SendWatcher;
  readonly #ms: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(ms: number, watcher: SendWatcher) {
    this.#ms = ms;
    this.watcher = watcher;
  }

  start(): void {
    this.#timer = setTimeout(onTimer, this.#ms, this);
  }

  /** A piece of the request went out. */
  progressed(): void {
    this.#timer?.refresh();
  }

  stop(): void {
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** @internal the timeout passed since the last write. */
  fired(): void {
    if (this.#timer === null || !this.watcher.stillSending) return;
    if (!this.watcher.body.isPaused()) {
      this.#timer.refresh();
      return;
    }
    this.#timer = null;
    this.watcher.sendTimedOut();
  }
}
