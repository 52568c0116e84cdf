/**
 * A worker's request that waits for an API limiter or a priority level, as the main thread admits it
 * (remote-admissions.ts asks, admission-desk.ts answers): plain data both ways.
 */
import type { LogLine } from '../../engine/log-line.ts';
import type { Decision } from '../http/contract/decision.ts';
import type { PriorityClass } from '../policy/priority-admission.ts';

/** What the main thread needs to admit a request: which limiter, and the rule's answers. */
export type AdmissionTicket =
  | {
      readonly kind: 'priority';
      readonly level: string;
      readonly flow: string;
      readonly rule: PriorityClass['rule'];
    }
  | { readonly kind: 'api-limiter'; readonly zone: string; readonly status: number };

/** Worker → main. */
export type AdmissionRequest =
  | { readonly kind: 'admit'; readonly id: number; readonly ticket: AdmissionTicket }
  /** Its client went away while it waited. */
  | { readonly kind: 'withdraw'; readonly id: number }
  /** Its exchange is over: what it holds of the limiter is given back. */
  | { readonly kind: 'finish'; readonly id: number; readonly status: number | undefined };

/** Main → worker. */
export type AdmissionAnswer =
  /** Go on, with these response headers added (the priority level's name). */
  | {
      readonly kind: 'admitted';
      readonly id: number;
      readonly responseHeaders: readonly string[] | undefined;
    }
  | { readonly kind: 'refused'; readonly id: number; readonly decision: Decision }
  /** A line the limiter writes about the request, for the worker's error log (it has the context). */
  | { readonly kind: 'admission-log'; readonly id: number; readonly line: LogLine };
