/** nginx's error-log words for what a client did wrong while its request was held or forwarded. */
import type { ClientFault } from '../contract/decision.ts';

/** The client closed its side before the end of the body. */
export const PREMATURELY_CLOSED: ClientFault = Object.freeze({
  level: 'info',
  message: 'client prematurely closed connection',
});
/** `send_timeout` passed with the client taking nothing. */
export const SEND_TIMED_OUT: ClientFault = Object.freeze({
  level: 'info',
  message: 'client timed out (110: Connection timed out) while sending to client',
});
/** The chunked framing of the body is wrong. */
export const INVALID_CHUNKED_BODY: ClientFault = Object.freeze({
  level: 'error',
  message: 'client sent invalid chunked body',
});
