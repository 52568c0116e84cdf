/**
 * Writes only from the API's own clients, tokens or not. A web page can make a browser send a write
 * without the API's consent in two ways, and these checks close both:
 * - cross-site request forgery: a "simple" cross-origin request (a form, or `fetch` with `text/plain`)
 *   is sent without asking the API first (no CORS preflight). Its `Origin` (or `Sec-Fetch-Site:
 *   cross-site`) says where it comes from, and its body cannot be `application/json`: a page can send
 *   that type only to its own origin, or after a preflight this API never answers.
 * - DNS rebinding: the attacker's name resolves to this address, so the browser sends the page's
 *   requests here as same-origin ones, with the attacker's name as `Host`, which is not one of the
 *   API's own names (own-hosts.ts).
 * Checked after the access checks and read-only, before the body is read (docs/security.md, "Writes
 * from browsers").
 */
import type { FastifyRequest } from 'fastify';
import { LimitswitchError } from '../shared/errors.ts';
import { OwnHosts } from './own-hosts.ts';

/** What the checks read of a write request. */
export interface WriteRequestHead {
  readonly method: string;
  /** Of the connection: `https` when it is TLS. */
  readonly scheme: 'http' | 'https';
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
  readonly contentType: string | undefined;
  /** A body follows (`Content-Length` above 0, or `Transfer-Encoding`). */
  readonly hasBody: boolean;
}

/** How curl sends JSON: said in every 415, since `curl -d` sends a form. */
const CURL_HINT = "curl: -H 'Content-Type: application/json', or --json instead of -d";

/** `Sec-Fetch-Site` values of the API's own pages (`none`: typed by the user, no page involved). */
const OWN_FETCH_SITES = new Set(['same-origin', 'none']);

export class BrowserChecks {
  readonly #hosts: OwnHosts;

  constructor(serverNames: readonly string[] = []) {
    this.#hosts = new OwnHosts(serverNames);
  }

  /** Throws 421 HostNotAllowed, 403 OriginNotAllowed or 415 ContentTypeNotJson, in that order. */
  checkWrite(head: WriteRequestHead): void {
    this.#checkHost(head.host);
    this.#checkOrigin(head);
    checkContentType(head);
  }

  #checkHost(host: string | undefined): void {
    if (this.#hosts.allows(host)) return;
    const name = OwnHosts.nameOf(host);
    if (name === '') {
      throw new LimitswitchError(
        'HostNotAllowed',
        "the request names no host: writes must name one of this API's names (an IP address, localhost or a --server-name)",
      );
    }
    const hint = OwnHosts.invalid(name) === null ? `; allow it with --server-name ${name}` : '';
    throw new LimitswitchError(
      'HostNotAllowed',
      `host ${JSON.stringify(name)} is not one of this API's names${hint}`,
    );
  }

  /** `Origin`, when sent, is the request's own: the same host, and the connection's scheme or https. */
  #checkOrigin(head: WriteRequestHead): void {
    if (head.origin !== undefined && !sameOrigin(head.origin, head.scheme, head.host ?? '')) {
      throw new LimitswitchError(
        'OriginNotAllowed',
        `origin ${JSON.stringify(head.origin)} is not this API's own (${head.scheme}://${head.host ?? ''}): writes from pages of other origins are refused`,
      );
    }
    const site = head.secFetchSite;
    if (site !== undefined && !OWN_FETCH_SITES.has(site.toLowerCase())) {
      throw new LimitswitchError(
        'OriginNotAllowed',
        `Sec-Fetch-Site ${JSON.stringify(site)}: writes from pages of other origins are refused`,
      );
    }
  }
}

/**
 * An https page of the API's own name is its own too when the connection is plain HTTP: TLS ends in
 * front of the control plane (docs/security.md, "Transport"). Ports compare as the browser writes them.
 */
function sameOrigin(origin: string, scheme: 'http' | 'https', host: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed or file page) among others
  }
  const protocol = url.protocol.slice(0, -1);
  if (protocol !== scheme && !(scheme === 'http' && protocol === 'https')) return false;
  const defaultPort = protocol === 'https' ? ':443' : ':80';
  const authority = host.toLowerCase();
  return url.host === (authority.endsWith(defaultPort) ? authority.slice(0, -defaultPort.length) : authority);
}

/**
 * A body comes as `application/json` (parameters allowed) or a `+json` type (RFC 6839): none of them
 * is a type a page may send cross-origin without a preflight. A write without a body needs none.
 * A PATCH without any `Content-Type` is read as JSON too: nginx-plus-go-client sends its PATCHes so,
 * and PATCH is not a method a page may send cross-origin without a preflight (which this API never
 * grants); a POST without one could come from a page (`fetch` with a binary body sets no type).
 */
function checkContentType(head: WriteRequestHead): void {
  if (!head.hasBody) return;
  const type = (head.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(type)) return;
  if (head.contentType === undefined && head.method === 'PATCH') return;
  if (type === '') {
    throw new LimitswitchError(
      'ContentTypeNotJson',
      `the request body has no Content-Type: send it as application/json (${CURL_HINT})`,
    );
  }
  throw new LimitswitchError(
    'ContentTypeNotJson',
    `the request body is ${JSON.stringify(type.slice(0, 100))}, not JSON: send it as application/json (${CURL_HINT})`,
  );
}

/** The head of a fastify request, for the checks. */
export function writeRequestHead(request: FastifyRequest): WriteRequestHead {
  const headers = request.headers;
  const length = headers['content-length'];
  return {
    method: request.method,
    scheme: request.protocol === 'https' ? 'https' : 'http',
    host: headers.host,
    origin: headers.origin,
    secFetchSite: single(headers['sec-fetch-site']),
    contentType: headers['content-type'],
    hasBody: headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0),
  };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
