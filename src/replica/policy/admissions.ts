/**
 * Where a request that waits for an API limiter or a priority level is admitted: by this thread's
 * limiters (LOCAL_ADMISSIONS), or, in a worker thread, by the main thread's, which hold them for all
 * workers (replica/workers/remote-admissions.ts).
 */
import type { WaitDecision } from '../http/contract/decision.ts';
import { type AdmissionContext, apiLimiterWait } from './api-limiter-admission.ts';
import { type PriorityAdmission, priorityWait } from './priority-admission.ts';

export interface Admissions {
  priority(admission: PriorityAdmission): WaitDecision;
  apiLimiter(admission: AdmissionContext): WaitDecision;
}

export const LOCAL_ADMISSIONS: Admissions = Object.freeze({
  priority: priorityWait,
  apiLimiter: apiLimiterWait,
});
