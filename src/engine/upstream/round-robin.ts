/**
 * nginx's round-robin balancer of an `upstream` group (ngx_http_upstream_round_robin.c): the smooth
 * weighted choice of a server, `max_conns`, `max_fails` failures within `fail_timeout` leaving a
 * server out for `fail_timeout` (each failure lowering its effective weight, which comes back a step
 * per choice), `down` servers never chosen, and `backup` servers, a second list chosen from only when
 * the first has none to give (all down, failed, tried or at their `max_conns`). Pure: the caller passes
 * the time (a clock for `pick`, read only while a server has failures) and counts requests on the
 * servers. Times are nginx's: whole seconds (`ngx_time()`).
 */

import type { Clock } from '../../shared/clock.ts';

/** What the balancer reads and writes of one server (of nginx's ngx_http_upstream_rr_peer_t). */
export interface RoundRobinPeer {
  readonly weight: number;
  /** `max_conns` (0: no limit): requests it carries at once, counted in `active`. */
  readonly maxConns: number;
  /** Requests it carries now (nginx's `conns`). */
  active: number;
  /** Smooth round robin's running weight (nginx's `current_weight`). */
  currentWeight: number;
  /** nginx's `effective_weight`: `weight` lowered by failures, back up by one each time it could be chosen. */
  effectiveWeight: number;
  /** `max_fails` (0: failures are not counted) and `fail_timeout` in seconds. */
  readonly maxFails: number;
  readonly failTimeoutS: number;
  /** Failures counted (nginx's `fails`): reset by an answer after a check. */
  fails: number;
  /** Epoch seconds of the last failure (`accessed`), and of the last failure or check (`checked`). */
  accessedS: number;
  checkedS: number;
  /** `backup`: in the second list. */
  readonly backup: boolean;
  /** `down`: never chosen. */
  readonly down: boolean;
}

/**
 * A group's servers and their failure rule, each server's `max_fails` and `fail_timeout`. A group of one
 * server is never left out (nginx skips the accounting for a single peer).
 */
export class RoundRobin<P extends RoundRobinPeer> {
  /** All the servers, primary and backup, in the config's order. */
  readonly peers: readonly P[];
  /** How many servers a request may try: those not `down` (nginx's `tries` of both lists). */
  readonly tries: number;
  readonly #primary: readonly P[];
  readonly #backup: readonly P[];
  /** The one server of a group without backups (nginx's `single`: never left out). */
  readonly #single: P | null;

  constructor(peers: readonly P[]) {
    this.peers = peers;
    this.tries = peers.filter((peer) => !peer.down).length;
    this.#primary = peers.filter((peer) => !peer.backup);
    this.#backup = peers.filter((peer) => peer.backup);
    this.#single = peers.length === 1 ? peers[0]! : null;
  }

  /**
   * ngx_http_upstream_get_round_robin_peer: the next server of the primary list, else, when it has
   * none to give, of the backup list — where a request that went to a backup server stays for its
   * next tries, as nginx's does; null when neither has one ("no live upstreams").
   */
  pick(tried: readonly P[] | null, clock: Clock): P | null {
    const single = this.#single;
    if (single !== null) return tried === null && !single.down && !atMaxConns(single) ? single : null;
    const onBackup = tried?.some((peer) => peer.backup) === true;
    const primary = onBackup ? null : this.#pickFrom(this.#primary, tried, clock);
    if (primary !== null || this.#backup.length === 0) return primary;
    return this.#pickFrom(this.#backup, tried, clock);
  }

  /**
   * ngx_http_upstream_get_peer: the next server of `peers`, skipping those in `tried` (already tried
   * for this request), those `down`, those left out now (`max_fails` failures, `fail_timeout` not over
   * since the last) and those at their `max_conns`. Each server that could be chosen gains its
   * effective weight; the one with the most (the first of equals) is chosen and loses the total, so
   * weights 5, 1, 1 go a a b a c a a. The clock is read only when a server has failures.
   */
  #pickFrom(peers: readonly P[], tried: readonly P[] | null, clock: Clock): P | null {
    let best: P | null = null;
    let total = 0;
    let nowS = -1;
    for (const peer of peers) {
      if (peer.down || tried?.includes(peer) || atMaxConns(peer)) continue;
      if (peer.maxFails !== 0 && peer.fails >= peer.maxFails) {
        if (nowS === -1) nowS = seconds(clock);
        if (nowS - peer.checkedS <= peer.failTimeoutS) continue;
      }
      peer.currentWeight += peer.effectiveWeight;
      total += peer.effectiveWeight;
      if (peer.effectiveWeight < peer.weight) peer.effectiveWeight++;
      if (best === null || peer.currentWeight > best.currentWeight) best = peer;
    }
    if (best === null) return null;
    best.currentWeight -= total;
    // a check: an answer from here on clears its failures
    if (best.fails !== 0) {
      if (nowS === -1) nowS = seconds(clock);
      if (nowS - best.checkedS > best.failTimeoutS) best.checkedS = nowS;
    }
    return best;
  }

  /**
   * ngx_http_upstream_free_round_robin_peer with NGX_PEER_FAILED: the server failed a request at
   * `nowMs` (never counted for the only server). True when it is left out now (nginx then warns
   * "upstream server temporarily disabled").
   */
  markFailed(peer: P, nowMs: number): boolean {
    if (this.#single !== null) return false;
    const nowS = Math.floor(nowMs / 1000);
    peer.fails++;
    peer.accessedS = nowS;
    peer.checkedS = nowS;
    if (peer.maxFails === 0) return false;
    peer.effectiveWeight = Math.max(0, peer.effectiveWeight - Math.trunc(peer.weight / peer.maxFails));
    return peer.fails >= peer.maxFails;
  }

  /** The server answered (a request's end without a failure): a check passed clears its failures. */
  answered(peer: P): void {
    if (peer.fails !== 0 && peer.accessedS < peer.checkedS) peer.fails = 0;
  }

  /** Whether the server is left out at `nowMs` after failures (Plus's `unavail`). */
  isDown(peer: P, nowMs: number): boolean {
    return (
      peer.maxFails !== 0 &&
      peer.fails >= peer.maxFails &&
      Math.floor(nowMs / 1000) - peer.checkedS <= peer.failTimeoutS
    );
  }
}

function seconds(clock: Clock): number {
  return Math.floor(clock.nowMs() / 1000);
}

/** nginx's `peer->max_conns && peer->conns >= peer->max_conns`. */
export function atMaxConns(peer: RoundRobinPeer): boolean {
  return peer.maxConns !== 0 && peer.active >= peer.maxConns;
}
