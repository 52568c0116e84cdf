/**
 * Turns translation problems into Kubernetes Events on the object (`kubectl describe ingress` shows
 * them), through CoreV1Api `events create` — the one write our RBAC allows. Each distinct problem of
 * each object version is posted once; rebuilding the config after an endpoint change posts nothing new.
 */
import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import type { TranslationProblem } from '../objects.ts';

/** NIC's reasons: the object was rejected, or applied with a warning. */
export function eventReason(p: TranslationProblem): string {
  return p.severity === 'error' ? 'Rejected' : 'AddedOrUpdatedWithWarning';
}

/** The one-line text used in the Event and in the log line. */
export function problemMessage(p: TranslationProblem): string {
  const where = p.field ? `${p.field}: ` : '';
  const tail =
    p.severity === 'error'
      ? p.keptLastGood
        ? '; the last good version is still served'
        : '; not served'
      : '';
  return `${where}${p.error}${tail}`;
}

export function problemKey(p: TranslationProblem): string {
  const o = p.object;
  return [
    o.kind,
    o.namespace,
    o.name,
    o.uid ?? '',
    o.resourceVersion ?? '',
    p.field,
    p.error,
    p.severity,
  ].join('\u0000');
}

export function eventFor(p: TranslationProblem, component: string, instance: string, now: Date): CoreV1Event {
  const o = p.object;
  return {
    metadata: { generateName: `${o.name}.`, namespace: o.namespace },
    involvedObject: {
      kind: o.kind,
      apiVersion: o.apiVersion,
      namespace: o.namespace,
      name: o.name,
      ...(o.uid ? { uid: o.uid } : {}),
      ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
    },
    reason: eventReason(p),
    message: problemMessage(p),
    type: 'Warning',
    source: { component },
    reportingComponent: component,
    reportingInstance: instance,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

export class EventRecorder {
  private posted = new Set<string>();

  private readonly core: CoreV1Api;
  private readonly component: string;
  private readonly instance: string;

  constructor(core: CoreV1Api, component = 'limitswitch', instance = process.env.HOSTNAME ?? 'limitswitch') {
    this.core = core;
    this.component = component;
    this.instance = instance;
  }

  /**
   * Posts an Event for each problem not posted before; resolves with the failures (never throws).
   * Only the given (current) problems are remembered, so a problem that returns later is posted again.
   */
  async record(problems: readonly TranslationProblem[]): Promise<unknown[]> {
    const failures: unknown[] = [];
    const current = new Set(problems.map(problemKey));
    this.posted = new Set([...this.posted].filter((k) => current.has(k)));
    for (const p of problems) {
      const key = problemKey(p);
      if (this.posted.has(key) || !p.object.name) continue;
      this.posted.add(key);
      try {
        await this.core.createNamespacedEvent({
          namespace: p.object.namespace,
          body: eventFor(p, this.component, this.instance, new Date()),
        });
      } catch (err) {
        this.posted.delete(key);
        failures.push(err);
      }
    }
    return failures;
  }
}
