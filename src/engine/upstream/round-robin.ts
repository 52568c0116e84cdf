/**
 * nginx's round-robin balancer of an `upstream` group (ngx_http_upstream_round_robin.c): the smooth
 * weighted choice of a server, `max_conns`, a failed server left out for `fail_timeout`, `down`
 * servers never chosen, and `backup` servers, a second list chosen from only when the first has none
 * to give (all down, failed, tried or at their `max_conns`). Pure:
 * the caller passes the time (a clock for `pick`, read only while a server is left out) and counts
 * requests on the servers.
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
  /** Epoch ms until which the server is skipped; 0 when it is up. */
  downUntilMs: number;
  /** `backup`: in the second list. */
  readonly backup: boolean;
  /** `down`: never chosen. */
  readonly down: boolean;
}

/**
 * A group's servers and their failure rule, nginx's `max_fails=1 fail_timeout=…`: one failure leaves
 * a server out for `failTimeoutMs`. A group of one server is never left out (nginx skips the
 * accounting for a single peer).
 */
export class RoundRobin<P extends RoundRobinPeer> {
  /** All the servers, primary and backup, in the config's order. */
  readonly peers: readonly P[];
  readonly failTimeoutMs: number;
  /** How many servers a request may try: those not `down` (nginx's `tries` of both lists). */
  readonly tries: number;
  readonly #primary: readonly P[];
  readonly #backup: readonly P[];
  /** The one server of a group without backups (nginx's `single`: never left out). */
  readonly #single: P | null;

  constructor(peers: readonly P[], failTimeoutMs: number) {
    this.peers = peers;
    this.failTimeoutMs = failTimeoutMs;
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
   * for this request), those `down`, those left out now (`clock`, read only while one is) and those
   * at their `max_conns`. Each server that could be chosen gains its weight; the one with the most
   * (the first of equals) is chosen and loses the total, so weights 5, 1, 1 go a a b a c a a.
   */
  #pickFrom(peers: readonly P[], tried: readonly P[] | null, clock: Clock): P | null {
    let best: P | null = null;
    let total = 0;
    for (const peer of peers) {
      if (peer.down || tried?.includes(peer) || atMaxConns(peer)) continue;
      if (peer.downUntilMs !== 0) {
        if (peer.downUntilMs > clock.nowMs()) continue;
        peer.downUntilMs = 0;
      }
      peer.currentWeight += peer.weight;
      total += peer.weight;
      if (best === null || peer.currentWeight > best.currentWeight) best = peer;
    }
    if (best !== null) best.currentWeight -= total;
    return best;
  }

  /**
   * The server failed a request at `nowMs`: leave it out for `failTimeoutMs` (never the only
   * server). True when it was left out (nginx then warns "upstream server temporarily disabled").
   */
  markFailed(peer: P, nowMs: number): boolean {
    if (this.#single !== null) return false;
    peer.downUntilMs = nowMs + this.failTimeoutMs;
    return true;
  }

  /** Whether the server is left out at `nowMs` after a failure (Plus's `unavail`). */
  isDown(peer: P, nowMs: number): boolean {
    return peer.downUntilMs > nowMs;
  }
}

/** nginx's `peer->max_conns && peer->conns >= peer->max_conns`. */
export function atMaxConns(peer: RoundRobinPeer): boolean {
  return peer.maxConns !== 0 && peer.active >= peer.maxConns;
}
