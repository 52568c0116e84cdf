/**
 * What can go wrong between the proxy and an upstream server over HTTP/1.1, one class each. Names,
 * codes and messages are undici's (and llhttp's `HPE_…` for a head or framing the parser refuses):
 * upstream-failure.ts words them as nginx does, and forwarder.ts decides from the code whether
 * the failure is the server's, a timeout, or the client's.
 */

/** Each failure carries a stable `code`. */
abstract class UpstreamError extends Error {
  abstract readonly code: string;
}

/** A response head the proxy will not relay, or a broken chunked body (`code`: llhttp's). */
export class HttpParserError extends UpstreamError {
  override readonly name = 'HTTPParserError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** A head longer than the proxy reads (nginx: `upstream sent too big header`). */
export class HeadersOverflowError extends UpstreamError {
  override readonly name = 'HeadersOverflowError';
  readonly code = 'UND_ERR_HEADERS_OVERFLOW';
  constructor() {
    super('Headers Overflow Error');
  }
}

/** The server closed the connection before the answer was whole ("other side closed"). */
export class SocketError extends UpstreamError {
  override readonly name = 'SocketError';
  readonly code = 'UND_ERR_SOCKET';
}

/** No connection within `proxy_connect_timeout`. */
export class ConnectTimeoutError extends UpstreamError {
  override readonly name = 'ConnectTimeoutError';
  readonly code = 'UND_ERR_CONNECT_TIMEOUT';
  constructor() {
    super('Connect Timeout Error');
  }
}

/** No response head within `proxy_read_timeout`. */
export class HeadersTimeoutError extends UpstreamError {
  override readonly name = 'HeadersTimeoutError';
  readonly code = 'UND_ERR_HEADERS_TIMEOUT';
  constructor() {
    super('Headers Timeout Error');
  }
}

/** No piece of the body within `proxy_read_timeout` of the last. */
export class BodyTimeoutError extends UpstreamError {
  override readonly name = 'BodyTimeoutError';
  readonly code = 'UND_ERR_BODY_TIMEOUT';
  constructor() {
    super('Body Timeout Error');
  }
}

/** The exchange gave the request up (its client left). */
export class RequestAbortedError extends UpstreamError {
  override readonly name = 'AbortError';
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('Request aborted');
  }
}

/** A request on a connection the proxy closed. */
export class ClientDestroyedError extends UpstreamError {
  override readonly name = 'ClientDestroyedError';
  readonly code = 'UND_ERR_DESTROYED';
  constructor() {
    super('The client is destroyed');
  }
}

/** A request that cannot go out as it is (a request target with a space). */
export class InvalidArgumentError extends UpstreamError {
  override readonly name = 'InvalidArgumentError';
  readonly code = 'UND_ERR_INVALID_ARG';
}
