/**
 * nginx's buffers for one request head (ngx_http_alloc_large_header_buffer): lines go into
 * `client_header_buffer_size`; when it is full mid-line, the line so far moves to one of
 * `large_client_header_buffers`, and so on, until a line does not fit one large buffer or none is left.
 * The large buffers are the default server's until a valid Host line selects another server.
 */

/** `client_header_buffer_size` and `large_client_header_buffers` of a server. */
export interface HeaderBuffers {
  readonly firstBytes: number;
  readonly largeCount: number;
  readonly largeBytes: number;
}

/** The servers a head may be read for. */
export interface HeadServers {
  /** The buffers of the connection's default server. */
  readonly defaultBuffers: HeaderBuffers;
  /** The buffers of the server a valid Host value selects. */
  buffersForHost(host: string): HeaderBuffers;
}

/**
 * nginx's buffers for one head: `take` a line (its length with the line end) and learn whether it
 * fitted, or how much of it nginx held when it gave up.
 */
export class HeadBuffers {
  #servers: HeadServers;
  #large: HeaderBuffers;
  #capacity: number;
  #used = 0;
  #busy = 0;

  constructor(servers: HeadServers) {
    this.#servers = servers;
    this.#large = servers.defaultBuffers;
    this.#capacity = servers.defaultBuffers.firstBytes;
  }

  /** A valid Host line selected a server: later large buffers are its. */
  hostSelected(host: string): void {
    this.#large = this.#servers.buffersForHost(host);
  }

  /**
   * -1 when a line of `length` bytes fits; else the bytes of it nginx held when it refused
   * (ngx_http_alloc_large_header_buffer: the line so far must be shorter than one large buffer, and
   * a large buffer must be left; a line that starts at the very end of a full buffer moves nothing).
   */
  take(length: number): number {
    let held = 0;
    for (;;) {
      const space = this.#capacity - this.#used;
      if (length - held <= space) {
        this.#used += length - held;
        return -1;
      }
      held += space;
      if (held > 0 && held >= this.#large.largeBytes) return held;
      if (this.#busy >= this.#large.largeCount) return held;
      this.#busy++;
      this.#capacity = this.#large.largeBytes;
      this.#used = held;
    }
  }
}
