/**
 * The main thread's side of the workers' admissions (remote-admissions.ts): it holds the site's API
 * limiters and priority levels, so one set of seats, queues and rates serves every worker, and admits
 * each waiting request with the same code a one-thread replica runs (policy/admissions.ts). What a
 * request holds is kept until its worker says the exchange ended; a worker that dies gives back all
 * it held and withdraws all it waited for.
 */
import type { Site } from '../../engine/http/site.ts';
import type { LogLine } from '../../engine/log-line.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Decision, HeldUntilEnd, PassDecision } from '../http/contract/decision.ts';
import { INTERNAL_ERROR } from '../http/contract/fault-boundary.ts';
import { LOCAL_ADMISSIONS } from '../policy/admissions.ts';
import type { AdmissionAnswer, AdmissionRequest, AdmissionTicket } from './admission-messages.ts';

/** What the admission goes on with here: nothing but a mark (the worker forwards). */
const ADMITTED: PassDecision = Object.freeze({ action: 'pass' });

/** One worker's requests at the desk. */
export class AdmissionDesk {
  readonly #site: () => Site;
  readonly #clock: Clock;
  readonly #answer: (answer: AdmissionAnswer) => void;
  readonly #withdrawals = new Map<number, () => void>();
  readonly #held = new Map<number, HeldUntilEnd>();

  constructor(site: () => Site, clock: Clock, answer: (answer: AdmissionAnswer) => void) {
    this.#site = site;
    this.#clock = clock;
    this.#answer = answer;
  }

  take(request: AdmissionRequest): void {
    const id = request.id;
    if (request.kind === 'withdraw') {
      const withdraw = this.#withdrawals.get(id);
      this.#withdrawals.delete(id);
      withdraw?.();
    } else if (request.kind === 'finish') {
      const held = this.#held.get(id);
      this.#held.delete(id);
      held?.release(request.status);
    } else this.#admit(id, request.ticket);
  }

  /** The worker is gone: what it held is given back, what it waited for withdrawn. */
  close(): void {
    for (const withdraw of this.#withdrawals.values()) withdraw();
    for (const held of this.#held.values()) held.release();
    this.#withdrawals.clear();
    this.#held.clear();
  }

  #admit(id: number, ticket: AdmissionTicket): void {
    const wait = this.#waitFor(id, ticket);
    if (wait === null) {
      this.#answer({ kind: 'refused', id, decision: INTERNAL_ERROR });
      return;
    }
    let settled = false;
    const withdraw = wait((next: Decision) => {
      settled = true;
      this.#withdrawals.delete(id);
      if (next.action !== 'pass') {
        this.#answer({ kind: 'refused', id, decision: next });
        return;
      }
      if (next.slots !== undefined && next.slots !== null) this.#held.set(id, next.slots);
      this.#answer({ kind: 'admitted', id, responseHeaders: next.responseHeaders });
    });
    if (!settled) this.#withdrawals.set(id, withdraw);
  }

  /** The limiter's wait for the ticket, or null when this configuration no longer has it. */
  #waitFor(id: number, ticket: AdmissionTicket): ((settle: (next: Decision) => void) => () => void) | null {
    const site = this.#site();
    const log = (line: LogLine) => this.#answer({ kind: 'admission-log', id, line });
    const clock = this.#clock;
    if (ticket.kind === 'priority') {
      const level = site.priorityLevels.get(ticket.level);
      if (level === undefined) return null;
      const classification = { level, flow: ticket.flow, rule: ticket.rule };
      return LOCAL_ADMISSIONS.priority({ classification, clock, proceed: ADMITTED, log }).wait;
    }
    const limiter = site.apiLimiters.get(ticket.zone);
    if (limiter === undefined) return null;
    const refuse: Decision = { action: 'reject', code: ticket.status };
    return LOCAL_ADMISSIONS.apiLimiter({ limiter, clock, proceed: ADMITTED, refuse, log }).wait;
  }
}
