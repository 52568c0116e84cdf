/**
 * The client side of one exchange's answer: what goes into the client response and how. An answer
 * of the replica's own (a page, a `return`) goes out in one piece; an upstream's is relayed — its
 * head held until the end of the read that brought it, so a small response leaves head, body and
 * all in one write — with nginx's keep-alive and lingering rules for the connection, `send_timeout`
 * while the client takes nothing, and `$body_bytes_sent` counted. The exchange (proxy-exchange.ts)
 * decides when; this writes.
 */
import type { Readable } from 'node:stream';
import type { AnswerHeaders } from '../../../engine/http/add-headers.ts';
import { keepAliveDisabled } from '../../../engine/http/keepalive-disable.ts';
import { loopClock } from '../../../shared/clock.ts';
import type { ClientConnection } from '../contract/client-connection.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import type { RelayedAnswer } from '../contract/decision.ts';
import { containFault } from '../contract/fault-boundary.ts';
import { upstreamLimitRate } from '../upstream/accel-limit-rate.ts';
import { clientResponseHeaders, withOwnServer } from '../upstream/forward-headers.ts';
import type { AnswerSink } from '../upstream/forward-owner.ts';
import { addAnswerHeaders } from '../wire/added-fields.ts';
import { isPooledBodyChunk, releaseBodyChunk } from '../wire/body-buffers.ts';
import { pageAnswer, returnAnswer, serverValue } from '../wire/own-answer-head.ts';
import { respellNginxFields } from '../wire/relayed-head.ts';
import { statusReason, wireStatus } from '../wire/status-pages.ts';
import { type AnswerRules, onResponseClose, onSendTimeout, type ResponseWatcher } from './answer-rules.ts';
import { lingerOnClose } from './lingering-close.ts';
import { type BodyOut, bodyOut } from './paced-body.ts';

export type { AnswerRules };

export class Responder implements AnswerSink {
  readonly res: ClientResponse;
  /** `$body_bytes_sent`, counted as the body is handed to the client connection. */
  bodyBytes = 0;
  readonly #h2: boolean;
  readonly #connection: ClientConnection;
  readonly #rules: AnswerRules;
  /** The upstream's answer: its status, reason phrase and head for the client. */
  #status = 0;
  #statusText = '';
  #headers: string[] | null = null;
  /** The decision forwarded: the fields it adds, its r->err_status, its `proxy_ignore_headers`. */
  #relayed: RelayedAnswer = {};
  /** The `add_header` lines every answer is given under (add-headers.ts). */
  #answerHeaders: AnswerHeaders | null = null;
  /** Lets the server's reading go on once the client took what waited. */
  #resume: (() => void) | null = null;
  /** The first body chunk, held until the head goes out with it. */
  #pending: Buffer | null = null;
  /** The client sent `Expect: 100-continue` and has not been told to go on yet. */
  #expectsContinue = false;
  /** `send_timeout`'s timer, while the client takes nothing. */
  #sendWatch: NodeJS.Timeout | null = null;
  /** Where the body goes once the head is out: the response, or `limit_rate`'s pacing before it. */
  #out: BodyOut | null = null;
  /** The upstream's `X-Accel-Limit-Rate` (ngx_http_upstream_process_limit_rate); null: none. */
  #upstreamRate: number | null = null;

  constructor(res: ClientResponse, h2: boolean, connection: ClientConnection, rules: AnswerRules) {
    this.res = res;
    this.#h2 = h2;
    this.#connection = connection;
    this.#rules = rules;
  }

  /**
   * The request carries `Expect: 100-continue`: `100 Continue` goes out when the body is wanted — when
   * the request is forwarded (after a delay, if held), or answered without it (nginx reads and drops
   * the body then) — and never for a refusal (nginx's 413 is sent instead).
   */
  expectContinue(): void {
    this.#expectsContinue = true;
  }

  /** The body is wanted: `100 Continue`, if the client waits for it. */
  continue(): void {
    if (!this.#expectsContinue) return;
    this.#expectsContinue = false;
    if (!this.res.headersSent) this.res.writeContinue();
  }

  /** The request is refused: no `100 Continue` ever. */
  noContinue(): void {
    this.#expectsContinue = false;
  }

  /** nginx's page for `code` (not a closing one); `closes`: the connection ends after it, lingering. */
  page(code: number, closes: boolean, retryAfterS?: number, extraHeaders?: readonly string[]): void {
    if (closes) this.closeAfter();
    const own = pageAnswer(code, this.#rules.timers.serverTokens, retryAfterS, extraHeaders);
    this.end(wireStatus(code), own.headers, own.body);
  }

  /** nginx `return code text`/`return code URL` (own-answer-head.ts). */
  answer(code: number, text: string | undefined, given: Readonly<Record<string, string>>): void {
    const own = returnAnswer(code, text, given, this.#rules.timers.serverTokens);
    this.end(code, own.headers, own.body);
  }

  /** The answer ends the connection, lingering (nginx drops keep-alive after these pages). */
  closeAfter(): void {
    if (this.#h2) return; // an HTTP/2 stream ends by itself; its connection carries the others on
    this.res.shouldKeepAlive = false;
    const socket = this.res.socket ?? this.#connection.socket;
    lingerOnClose(socket, this.#rules.timers);
  }

  /** The request is answered under these `add_header` lines (null: none; undefined: as it was). */
  answerUnder(answerHeaders: AnswerHeaders | null | undefined): void {
    if (answerHeaders !== undefined) this.#answerHeaders = answerHeaders;
  }

  /** A whole answer of the replica's own, in one piece. */
  end(status: number, headers: string[], body: Buffer | string | null): void {
    const res = this.res;
    this.addHeaders(status, headers, true);
    this.#keepAliveRule();
    res.writeHead(status, statusReason(status), headers);
    if (body === null) res.end();
    else {
      this.bodyBytes += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      this.#bodyOut().end(body);
    }
    this.#watchSendEnd();
  }

  /** An answer from disk (http/static/): its head now, then `body` as the client takes it. */
  stream(status: number, headers: string[], body: Readable | null): void {
    const res = this.res;
    this.#keepAliveRule();
    headers.unshift('Server', serverValue(this.#rules.timers.serverTokens));
    this.addHeaders(status, headers, true);
    res.writeHead(status, statusReason(status), headers);
    if (body === null) {
      res.end();
      this.#watchSendEnd();
      return;
    }
    const out = this.#bodyOut();
    res.once('close', () => body.destroy());
    body.on('error', () => res.destroy());
    body.on('end', () => {
      out.end();
      this.#watchSendEnd();
    });
    body.on('data', (chunk: Buffer) => {
      this.bodyBytes += chunk.length;
      if (out.write(chunk)) return;
      body.pause();
      this.#watchClient(out);
      out.once('drain', () => {
        this.#unwatchSend();
        body.resume();
      });
    });
  }

  // the upstream's answer, relayed

  /** The answer to relay is a server's, for `target`. */
  relaying(target: RelayedAnswer): void {
    this.#relayed = target;
  }

  /** The upstream's head arrived: kept until the read that brought it ends (or the answer does). */
  upstreamHead(
    status: number,
    statusText: string,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
  ): void {
    const { errStatus = 0, responseHeaders: added, proxyRules } = this.#relayed;
    this.#status = errStatus || status;
    this.#statusText = errStatus === 0 ? statusText : '';
    this.#resume = resume;
    const ignoresRate = proxyRules?.ignoreHeaders.has('X-Accel-Limit-Rate') === true;
    this.#upstreamRate = ignoresRate ? null : upstreamLimitRate(rawHeaders);
    const headers = clientResponseHeaders(rawHeaders, proxyRules);
    respellNginxFields(headers);
    // nginx's own Server goes with a relayed answer too (the server's only with `proxy_pass_header Server`)
    withOwnServer(headers, proxyRules, serverValue(this.#rules.timers.serverTokens));
    this.#headers = added === undefined || added.length === 0 ? headers : [...headers, ...added];
    this.addHeaders(this.#status, this.#headers);
  }

  /**
   * ngx_http_headers_filter: the `add_header` fields for the answer's status, once it is known;
   * `own`: an answer of the replica's, not a server's (added-fields.ts).
   */
  addHeaders(status: number, headers: string[], own = false): void {
    const progress = this.#rules.downstream.progress;
    progress.status = status;
    addAnswerHeaders(headers, this.#answerHeaders, status, own, loopClock.nowMs());
    progress.sentHeaders = headers;
  }

  /** The head goes out now, with the body chunk that waited for it. */
  flushHead(): void {
    if (this.res.headersSent) return;
    this.#writeHead();
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      this.bodyBytes += pending.length;
      this.#write(pending);
    }
  }

  /** A piece of the upstream's body; false: the client takes no more for now (`resume` once it does). */
  data(chunk: Buffer): boolean {
    const res = this.res;
    if (!res.headersSent) {
      if (this.#pending === null) {
        this.#pending = chunk;
        return true;
      }
      this.flushHead();
    }
    this.bodyBytes += chunk.length;
    if (this.#write(chunk)) return true;
    const resume = this.#resume!;
    const out = this.#bodyOut();
    out.once('drain', () => this.#resumeUpstream(resume));
    this.#watchClient(out);
    return false;
  }

  /** The upstream's answer is complete. */
  complete(): void {
    const res = this.res;
    if (!res.headersSent) this.#writeHead();
    const pending = this.#pending;
    const out = this.#bodyOut();
    if (pending === null) {
      out.end();
    } else {
      this.#pending = null;
      this.bodyBytes += pending.length;
      if (isPooledBodyChunk(pending)) out.end(pending, () => releaseBodyChunk(pending));
      else out.end(pending);
    }
    this.#watchSendEnd();
  }

  /** `watcher` hears the response's 'close': it ended, or its client went away before that. */
  onClose(watcher: ResponseWatcher): void {
    this.res.on('close', () => onResponseClose(watcher));
  }

  /** The exchange is over: `send_timeout` stops. */
  stop(): void {
    this.#unwatchSend();
  }

  /** `send_timeout` fired (its timer is spent). */
  sendTimerSpent(): void {
    this.#sendWatch = null;
  }

  /** Writes a chunk of the body; one in a pooled slab goes back once written (body-buffers.ts). */
  #write(chunk: Buffer): boolean {
    const out = this.#bodyOut();
    if (!isPooledBodyChunk(chunk)) return out.write(chunk);
    return out.write(chunk, (err?: Error | null) => {
      if (!err) releaseBodyChunk(chunk);
    });
  }

  /**
   * Where the body goes, settled when it starts (ngx_http_write_filter's first call): at the rate in
   * force — the upstream's X-Accel-Limit-Rate, `set $limit_rate`, the location's `limit_rate` — paced.
   */
  #bodyOut(): BodyOut {
    if (this.#out !== null) return this.#out;
    const upstreamRate = this.#upstreamRate;
    const rate =
      this.#answerHeaders?.rate(upstreamRate) ??
      (upstreamRate === null ? null : { bytesPerS: upstreamRate, afterBytes: 0 });
    const progress = this.#rules.downstream.progress;
    progress.limitRate = rate?.bytesPerS ?? 0;
    const waits = { blocked: () => this.#watchSend(), unblocked: () => this.#unwatchSend() };
    const head = this.#rules.req.method === 'HEAD';
    this.#out = bodyOut(this.res, head ? null : rate, progress.startedMs, loopClock, waits);
    return this.#out;
  }

  /**
   * `send_timeout` runs while the client takes nothing: a paced body arms it itself, only while the
   * client holds it up, never while the rate does (nginx keeps no send timer on a delayed write).
   */
  #watchClient(out: BodyOut): void {
    if (out === this.res) this.#watchSend();
  }

  /** The client took what waited: the upstream's reading goes on. */
  #resumeUpstream(resume: () => void): void {
    this.#unwatchSend();
    try {
      resume();
    } catch (error) {
      const socket = this.#rules.clientSocket;
      containFault('client', error, socket, socket);
    }
  }

  /**
   * Whether the answer may keep its connection (a graceful close, nginx's keep-alive limits:
   * client-connection.ts); the connection idles for the location's `keepalive_timeout` after it.
   */
  #keepAliveRule(): void {
    if (this.#h2) return; // an HTTP/2 stream ends by itself; its session counts its streams
    const res = this.res;
    const timers = this.#rules.timers;
    if (this.#rules.closing || !this.#connection.mayKeepAlive(timers)) res.shouldKeepAlive = false;
    else if (res.shouldKeepAlive) {
      const req = this.#rules.req;
      if (keepAliveDisabled(timers.keepaliveDisable, req.method, req.rawHeaders)) res.shouldKeepAlive = false;
    }
    // `lingering_close always`: every connection the server ends lingers
    const socket = this.#rules.clientSocket;
    if (!res.shouldKeepAlive && timers.lingeringClose === 'always' && socket !== null)
      lingerOnClose(socket, timers);
    // the replica's own writer asks how long the connection idles, and the Keep-Alive header it sends
    res.idleUnder?.(timers);
  }

  #writeHead(): void {
    this.#keepAliveRule();
    this.res.writeHead(this.#status, this.#statusText || statusReason(this.#status), this.#headers!);
  }

  /** `send_timeout` runs while the client takes nothing of what was written to it. */
  #watchSend(): void {
    const ms = this.#rules.timers.sendTimeoutMs;
    if (this.#sendWatch === null && ms > 0) this.#sendWatch = setTimeout(onSendTimeout, ms, this.#rules);
  }

  /** The response is all written: the client still has to take what its connection holds. */
  #watchSendEnd(): void {
    if ((this.#rules.clientSocket?.writableLength ?? 0) > 0) this.#watchSend();
  }

  #unwatchSend(): void {
    if (this.#sendWatch === null) return;
    clearTimeout(this.#sendWatch);
    this.#sendWatch = null;
  }
}
