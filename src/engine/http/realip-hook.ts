/**
 * realip's PREACCESS step (ngx_http_realip_handler, run again with the location's settings): facts
 * that can take it implement `realIpAt`, and the phases call it with the configuration the rewrite
 * phase ended in, before limit_req. The address it sets holds for what is read after it; a value
 * read before (and cached) stays, as nginx's does.
 */
import type { RealIpDefinition } from './location-handler.ts';

export interface RealIpAt {
  realIpAt?(realIp: RealIpDefinition): void;
}
