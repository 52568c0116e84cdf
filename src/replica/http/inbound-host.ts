/**
 * What a listener's readers of connections (HTTP/1: its own, then node:http's; h2) see of it
 * (proxy-server.ts). A class rather than an object literal with getters: its accessors sit on one
 * prototype, which the compiler inlines on the per-request path (an object literal's own getters it
 * reaches through a generic lookup each time).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../engine/http/client-timers.ts';
import type { PeerInfo } from './contract/client-connection.ts';
import type { ClientRequest } from './contract/client-request.ts';
import type { ClientResponse } from './contract/client-response.ts';
import type { ClientInputRules, Decision } from './contract/decision.ts';
import type { Exchange } from './exchange/proxy-exchange.ts';
import { INVALID_HOST, originForm } from './inbound/absolute-target.ts';
import { answerInvalidRequestLine } from './inbound/client-error.ts';
import type { H2InboundHost } from './inbound/h2-inbound.ts';
import type { Http1InboundHost } from './inbound/http1-inbound.ts';
import type { NodeHttpHost } from './inbound/node-http-inbound.ts';

/** The listener's state the readers follow (a reload changes the timers; a close sets `closing`). */
export interface ListenerState {
  readonly clientTimers: ClientTimers;
  readonly closing: boolean;
}

/** What the readers hand to the listener, as functions bound to it. */
export interface InboundCalls<D extends Decision> {
  peerOf(socket: Socket): PeerInfo;
  exchange(req: ClientRequest, res: ClientResponse, expectsContinue?: boolean): void;
  upgradeExchange(req: IncomingMessage, res: ServerResponse, head: Buffer): Exchange<D>;
  canTunnel: ((exchange: Exchange<D>) => boolean) | null;
  run(exchange: Exchange<D>): void;
  handOver(socket: Socket): void;
  connectionInfo(message: string, socket: Socket): void;
}

export class InboundHost<D extends Decision> implements NodeHttpHost<D>, Http1InboundHost, H2InboundHost {
  readonly clientInput: ClientInputRules<D> | null;
  readonly peerOf: InboundCalls<D>['peerOf'];
  readonly upgradeExchange: InboundCalls<D>['upgradeExchange'];
  readonly canTunnel: InboundCalls<D>['canTunnel'];
  readonly run: InboundCalls<D>['run'];
  readonly handOver: InboundCalls<D>['handOver'];
  readonly connectionInfo: InboundCalls<D>['connectionInfo'];
  readonly #listener: ListenerState;
  readonly #exchange: InboundCalls<D>['exchange'];

  constructor(listener: ListenerState, clientInput: ClientInputRules<D> | null, calls: InboundCalls<D>) {
    this.#listener = listener;
    this.clientInput = clientInput;
    this.peerOf = calls.peerOf;
    this.#exchange = calls.exchange;
    this.upgradeExchange = calls.upgradeExchange;
    this.canTunnel = calls.canTunnel;
    this.run = calls.run;
    this.handOver = calls.handOver;
    this.connectionInfo = calls.connectionInfo;
  }

  /** A request read (HTTP/1: an absolute-form target is read as nginx reads it first). */
  exchange(req: ClientRequest, res: ClientResponse, expectsContinue?: boolean): void {
    if (req.url !== undefined && req.url.charCodeAt(0) !== 0x2f /* / */ && req.h2 !== true) {
      const form = originForm(req.url);
      if (form === INVALID_HOST) {
        answerInvalidRequestLine(req.socket, this.#listener.clientTimers);
        return;
      }
      if (form !== null) {
        const absolute = req as { url?: string; requestLineHost?: string };
        absolute.url = form.path;
        absolute.requestLineHost = form.host;
      }
    }
    this.#exchange(req, res, expectsContinue);
  }

  get clientTimers(): ClientTimers {
    return this.#listener.clientTimers;
  }

  get closing(): boolean {
    return this.#listener.closing;
  }
}
