/**
 * A compiled `server` block and its tree of locations: what routing searches, and what each server
 * sets for the request heads it reads.
 */

import type { NginxRegex } from '../nginx-regex.ts';
import type { SslVerifyClient } from './client-verify.ts';
import type { RoutableLocation } from './find-location.ts';
import type { NamedServer } from './find-server.ts';
import type { HeaderBuffers } from './header-buffers.ts';
import type { LocationHandler } from './location-handler.ts';

export interface SiteLocation extends RoutableLocation<SiteLocation> {
  readonly handler: LocationHandler;
}

export interface SiteServer extends NamedServer {
  readonly locations: readonly SiteLocation[];
  /** `location @name` blocks, by name (`@name`): where `error_page … @name` goes. */
  readonly named: ReadonlyMap<string, LocationHandler>;
  /** For requests that match no location; its script is the server's (SERVER_REWRITE). */
  readonly handler: LocationHandler;
  /** `client_header_buffer_size` and `large_client_header_buffers`. */
  readonly headerBuffers: HeaderBuffers;
  /** The named captures of each `server_name` regex, by slot (absent: none). */
  readonly serverNameSlots?: ReadonlyMap<NginxRegex, ReadonlyMap<string, number>>;
  /** `ssl_verify_client` (requests on TLS connections). */
  readonly clientVerify: SslVerifyClient;
}
