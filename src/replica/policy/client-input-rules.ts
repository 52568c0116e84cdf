/**
 * The hook's rules for client input: how large a head node:http's parser may take, what nginx answers
 * for a head it refused, what it finds too large in an HTTP/2 header block, and nginx's error-log
 * lines about refused heads and client faults.
 */

import type { RefusedHead } from '../../engine/http/head-refusal.ts';
import { type RequestHead, rejectedVersion } from '../../engine/http/request-head.ts';
import type { Site } from '../../engine/http/site.ts';
import { normalizePeerAddress } from '../../engine/net/address-text.ts';
import { connectionOf } from '../http/contract/client-connection.ts';
import type {
  ClientInputRules,
  Decision,
  DownstreamRequest,
  UnreadableHead,
} from '../http/contract/decision.ts';
import { connectionNumber, type ErrorLog, requestLogContext } from '../logs/error-log.ts';

/** What the rules read: the site (through a getter, for reloads), the listener's port, the log. */
export interface ClientInputOptions {
  readonly site: () => Site;
  /** The `listen` port this listener serves. */
  readonly port: number;
  readonly errorLog: ErrorLog;
}

/**
 * node:http's parser may take this many times the largest head nginx would read, so that nginx's
 * buffer rules decide in most cases (its count is of names, values and target only).
 */
const PARSER_ROOM = 2;

/** The hook's rules for client input: the parser's room, heads it refused, faults while forwarding. */
export function clientRules<D extends Decision & { readonly serverName?: string }>(
  options: ClientInputOptions,
): ClientInputRules<D> {
  return {
    maxHeaderBytes: () => PARSER_ROOM * options.site().maxHeadBytes(options.port),
    unreadableHead: (head) => {
      const refused = unreadable(options.site(), head, options.port);
      if (refused === null) return head.code === 'HPE_HEADER_OVERFLOW' ? 494 : 400;
      logRefusedHead(options.errorLog, refused, head.socket, normalizePeerAddress(head.socket.remoteAddress));
      return refused.fault.code;
    },
    h2HeaderBlockFault: (rawHeaders, socket) => {
      const connection = connectionOf(socket);
      const sniName = connection.handshake?.negotiatedName ?? null;
      return options.site().readH2HeaderBlock(rawHeaders, connection.serverAddr, options.port, sniName);
    },
    clientFault: (ctx, decision, fault) => {
      if (!options.errorLog.enabled(fault.level)) return;
      options.errorLog.request(fault, requestLogContext(ctx, decision.serverName ?? ''));
    },
  };
}

/**
 * What nginx answers for a head node:http refused: a head too large for it (nginx's buffers say how,
 * from the bytes it had), a version it does not take; else null (a plain 400, or a timeout's close:
 * nginx's wording for every other malformation is not reproduced).
 */
function unreadable(site: Site, head: UnreadableHead, port: number): RefusedHead | null {
  const serverAddr = connectionOf(head.socket).serverAddr;
  switch (head.code) {
    case 'HPE_HEADER_OVERFLOW':
      return site.readOversizedHead(head.bytes, serverAddr, port);
    case 'HPE_INVALID_VERSION':
      return site.refusal(rejectedVersion(head.bytes), serverAddr, port);
    case 'HPE_INVALID_TRANSFER_ENCODING': {
      // a list llhttp refuses (`chunked, identity`) is a coding nginx does not know: its 501
      const parsed = headOfBytes(head.bytes);
      return parsed === null ? null : site.readHead(parsed, serverAddr, port);
    }
    default:
      return null;
  }
}

/** A whole head as node:http's refused bytes carry it (the request line, its header lines); null if not whole. */
function headOfBytes(bytes: string): RequestHead | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [line, ...fields] = bytes.slice(0, end).split('\r\n');
  const parts = /^(\S+) (\S+) HTTP\/(\d)\.(\d)$/.exec(line!);
  if (parts === null) return null;
  const rawHeaders: string[] = [];
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon <= 0) return null;
    rawHeaders.push(field.slice(0, colon), field.slice(colon + 1).trim());
  }
  const [, method, url, major, minor] = parts;
  return { method, url, httpVersionMajor: Number(major), httpVersionMinor: Number(minor), rawHeaders };
}

/** nginx reads the head before realip runs: the line names the connection's peer. */
export function logRefusedHead(
  log: ErrorLog,
  refused: RefusedHead,
  socket: DownstreamRequest['clientSocket'],
  peer: string,
): void {
  if (!log.enabled('info')) return;
  const { fault, serverName } = refused;
  log.request(
    { level: 'info', message: fault.message },
    {
      connection: connectionNumber(socket),
      client: peer,
      server: serverName,
      requestLine: fault.requestLine,
      host: fault.host,
    },
  );
}
