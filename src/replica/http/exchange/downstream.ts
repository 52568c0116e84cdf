/**
 * The client side of one exchange as the hook, the logs and the callbacks see it (`DownstreamRequest`):
 * the request, its connection, `$remote_addr` and the realip peer, and what the decision reads of the
 * head (Host, Content-Length) before anything is forwarded.
 */
import type { Socket } from 'node:net';
import type { ClientConnection, RemoteAddress } from '../contract/client-connection.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import type { DownstreamRequest } from '../contract/decision.ts';
import { ProgressRecord } from '../contract/request-progress.ts';
import { readRequestFacts } from '../upstream/forward-headers.ts';

export class Downstream implements DownstreamRequest {
  readonly req: ClientRequest;
  readonly connection: ClientConnection;
  /** The peer's, until realip finds the request's (policy/realip-phases.ts). */
  remoteAddr: string;
  remotePort: number;
  readonly realipRemoteAddr: string;
  readonly realipRemotePort: number;
  // what the decision reads of the head (forward-headers.ts)
  host = '';
  contentLength = -1;
  hasBody = false;
  /** The servers tried, the answer's status, the time gone (`$upstream_*`, `$status`, `$request_time`). */
  readonly progress = new ProgressRecord();
  readonly #res: ClientResponse;

  constructor(req: ClientRequest, res: ClientResponse, connection: ClientConnection, remote: RemoteAddress) {
    this.req = req;
    this.#res = res;
    this.connection = connection;
    readRequestFacts(req.rawHeaders, this);
    if (req.requestLineHost !== undefined) this.host = req.requestLineHost;
    const peer = connection.peer ?? remote;
    this.realipRemoteAddr = peer.text;
    this.realipRemotePort = peer.port;
    this.remoteAddr = remote.text;
    this.remotePort = remote.port;
  }

  /** The client's connection (the request's socket can be cleared once its body was read). */
  get clientSocket(): Socket | null {
    return this.req.socket ?? this.#res.socket;
  }
}
