/**
 * A worker thread's admissions: the main thread holds every API limiter and priority level for all
 * workers (one set of seats and queues, as one replica has), so a request that waits for one is
 * admitted there (admission-desk.ts). Here the request waits for the answer: admitted, it goes on
 * holding its place until its exchange ends; refused, it gets the limiter's answer. Its limit_conn
 * slots stay in this thread's hands.
 */

import type { LogLine } from '../../engine/log-line.ts';
import {
  type Decision,
  heldTogether,
  type PassDecision,
  type ProxyDecision,
  type WaitDecision,
} from '../http/contract/decision.ts';
import type { Admissions } from '../policy/admissions.ts';
import type { AdmissionContext } from '../policy/api-limiter-admission.ts';
import type { PriorityAdmission } from '../policy/priority-admission.ts';
import type { AdmissionAnswer, AdmissionRequest, AdmissionTicket } from './admission-messages.ts';

interface Waiting {
  readonly settle: (next: Decision) => void;
  readonly proceed: PassDecision | ProxyDecision;
  readonly log: (line: LogLine) => void;
}

export class RemoteAdmissions implements Admissions {
  readonly #send: (request: AdmissionRequest) => void;
  readonly #waiting = new Map<number, Waiting>();
  /** Admitted and not finished: their lines (an API limiter's at finish) still go to their log. */
  readonly #admitted = new Map<number, (line: LogLine) => void>();
  #nextId = 1;

  constructor(send: (request: AdmissionRequest) => void) {
    this.#send = send;
  }

  priority(a: PriorityAdmission): WaitDecision {
    const { level, flow, rule } = a.classification;
    const { status, logLevel, dryRun, headers } = rule;
    return this.#wait(
      { kind: 'priority', level: level.name, flow, rule: { status, logLevel, dryRun, headers } },
      a,
    );
  }

  apiLimiter(a: AdmissionContext): WaitDecision {
    const status = 'code' in a.refuse ? (a.refuse.code as number) : 429;
    return this.#wait({ kind: 'api-limiter', zone: a.limiter.name, status }, a);
  }

  /** An answer from the main thread. */
  answer(answer: AdmissionAnswer): void {
    if (answer.kind === 'admission-log') {
      (this.#waiting.get(answer.id)?.log ?? this.#admitted.get(answer.id))?.(answer.line);
      return;
    }
    const waiting = this.#waiting.get(answer.id);
    if (waiting === undefined) return;
    this.#waiting.delete(answer.id);
    const { proceed, settle } = waiting;
    if (answer.kind === 'refused') {
      proceed.slots?.release();
      settle(answer.decision);
      return;
    }
    const id = answer.id;
    this.#admitted.set(id, waiting.log);
    const place = {
      release: (status?: number) => {
        if (!this.#admitted.delete(id)) return;
        this.#send({ kind: 'finish', id, status });
      },
    };
    const extra = answer.responseHeaders;
    settle({
      ...proceed,
      slots: heldTogether(proceed.slots ?? null, place) ?? undefined,
      responseHeaders:
        extra === undefined ? proceed.responseHeaders : [...(proceed.responseHeaders ?? []), ...extra],
    });
  }

  #wait(
    ticket: AdmissionTicket,
    a: { proceed: PassDecision | ProxyDecision; log: (line: LogLine) => void },
  ): WaitDecision {
    return {
      action: 'wait',
      wait: (settle) => {
        const id = this.#nextId++;
        this.#waiting.set(id, { settle, proceed: a.proceed, log: a.log });
        this.#send({ kind: 'admit', id, ticket });
        return () => {
          if (!this.#waiting.delete(id)) return;
          a.proceed.slots?.release();
          this.#send({ kind: 'withdraw', id });
        };
      },
    };
  }
}
