/**
 * Kubernetes API Priority and Fairness at the ingress, a limitswitch extension in nginx's manner:
 * - `priority_level_zone name [shares=N] [limit_response=queue|reject] [queues=N] [hand_size=N]
 *   [queue_length=N] [queue_timeout=time] | name type=exempt;` (http) — a PriorityLevelConfiguration;
 * - `priority_level_concurrency N;` (http, 600) — the seats the limited levels share
 *   (kube-apiserver's --max-requests-inflight + --max-mutating-requests-inflight);
 * - `priority_level level [flow=value];` (http, server, location) — the FlowSchema's part: the level a
 *   request goes to (any variables, a `map` of them, a keyval switch; empty: not limited) and its flow
 *   distinguisher (default `$binary_remote_addr`);
 * - `priority_level_status`, `priority_level_log_level`, `priority_level_dry_run`,
 *   `priority_level_headers`.
 */
import { shuffleShardingError } from '../../engine/priority/shuffle-shard.ts';
import { atoi, parseTimeMs } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { complexValue, duplicate, flagArg, httpOf, levelOf, logLevelArg, ref, statusArg } from './helpers.ts';
import { levelSlot } from './level-slot.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const LEVELS = ['http', 'server', 'location'] as const;

/** APF's defaults (PriorityLevelConfiguration v1: nominalConcurrencyShares 30; queuing 64, 8, 50). */
const DEFAULT_SHARES = 30;
const DEFAULT_QUEUES = 64;
const DEFAULT_HAND_SIZE = 8;
const DEFAULT_QUEUE_LENGTH = 50;
/** kube-apiserver's request wait limit: a quarter of the 60 s request timeout, at most 15 s. */
const DEFAULT_QUEUE_TIMEOUT_MS = 15_000;

const QUEUING_PARAMS = new Set(['queues', 'hand_size', 'queue_length', 'queue_timeout']);

function priorityLevelZone(d: Directive, scope: Scope): void {
  const name = d.args[0]!;
  const http = httpOf(scope);
  if (http.priorityLevelZones.some((zone) => zone.name === name))
    throw configError(`priority_level_zone "${name}" is already defined`, d);
  const values = new Map<string, string>();
  for (const param of d.args.slice(1)) {
    const eq = param.indexOf('=');
    const key = eq === -1 ? param : param.slice(0, eq);
    if (eq === -1 || !['shares', 'limit_response', 'type', ...QUEUING_PARAMS].includes(key))
      throw configError(`invalid parameter "${param}"`, d);
    if (values.has(key)) throw configError(`duplicate parameter "${key}"`, d);
    values.set(key, param.slice(eq + 1));
  }
  const type = values.get('type') ?? 'limited';
  if (type !== 'limited' && type !== 'exempt') throw configError(`invalid type "${type}"`, d);
  if (type === 'exempt') {
    const other = [...values.keys()].find((key) => key !== 'type');
    if (other !== undefined) throw configError(`"${other}" is not allowed for an exempt priority level`, d);
    http.priorityLevelZones.push({
      name,
      exempt: true,
      shares: 0,
      queuing: null,
      queueTimeoutMs: 0,
      source: ref(d),
    });
    return;
  }
  const number = (key: string, fallback: number, min: number): number => {
    const text = values.get(key);
    if (text === undefined) return fallback;
    const n = atoi(text);
    if (n === null || n < min) throw configError(`invalid ${key.replace('_', ' ')} "${text}"`, d);
    return n;
  };
  const shares = number('shares', DEFAULT_SHARES, 1);
  const response = values.get('limit_response') ?? 'queue';
  if (response !== 'queue' && response !== 'reject')
    throw configError(`invalid limit_response "${response}", it must be "queue" or "reject"`, d);
  if (response === 'reject') {
    const queuing = [...values.keys()].find((key) => QUEUING_PARAMS.has(key));
    if (queuing !== undefined)
      throw configError(`"${queuing}" is not allowed with "limit_response=reject"`, d);
    http.priorityLevelZones.push({
      name,
      exempt: false,
      shares,
      queuing: null,
      queueTimeoutMs: 0,
      source: ref(d),
    });
    return;
  }
  const queues = number('queues', DEFAULT_QUEUES, 1);
  const handSize = number('hand_size', Math.min(DEFAULT_HAND_SIZE, queues), 1);
  const queueLengthLimit = number('queue_length', DEFAULT_QUEUE_LENGTH, 1);
  const sharding = shuffleShardingError(queues, handSize);
  if (sharding !== null) throw configError(`invalid shuffle sharding: ${sharding}`, d);
  let queueTimeoutMs = DEFAULT_QUEUE_TIMEOUT_MS;
  const timeout = values.get('queue_timeout');
  if (timeout !== undefined) {
    const ms = parseTimeMs(timeout);
    if (ms === null || ms === 0) throw configError(`invalid queue timeout "${timeout}"`, d);
    queueTimeoutMs = ms;
  }
  http.priorityLevelZones.push({
    name,
    exempt: false,
    shares,
    queuing: { queues, handSize, queueLengthLimit },
    queueTimeoutMs,
    source: ref(d),
  });
}

function priorityLevelConcurrency(d: Directive, scope: Scope): void {
  const http = httpOf(scope);
  if (http.priorityLevelConcurrency !== null) throw duplicate(d);
  const n = atoi(d.args[0]!);
  if (n === null || n === 0) throw configError(`invalid value "${d.args[0]}" in "${d.name}" directive`, d);
  http.priorityLevelConcurrency = n;
}

function priorityLevel(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.priorityLevel !== null) throw duplicate(d);
  let flow = null;
  for (const param of d.args.slice(1)) {
    if (!param.startsWith('flow=') || flow !== null) throw configError(`invalid parameter "${param}"`, d);
    flow = complexValue(param.slice(5), d, scope);
  }
  level.priorityLevel = { level: complexValue(d.args[0]!, d, scope), flow, source: ref(d) };
  httpOf(scope).priorityLevelUses.push(level.priorityLevel);
}

const priorityLevelStatus = levelSlot('priorityLevelStatus', statusArg);

const priorityLevelLogLevel = levelSlot('priorityLevelLogLevel', logLevelArg);

const priorityLevelDryRun = levelSlot('priorityLevelDryRun', flagArg);

const priorityLevelHeaders = levelSlot('priorityLevelHeaders', flagArg);

export const priorityLevelDirectives: readonly DirectiveSpec[] = [
  { name: 'priority_level_zone', contexts: ['http'], args: '1+', handle: priorityLevelZone },
  { name: 'priority_level_concurrency', contexts: ['http'], args: [1], handle: priorityLevelConcurrency },
  { name: 'priority_level', contexts: LEVELS, args: [1, 2], handle: priorityLevel },
  { name: 'priority_level_status', contexts: LEVELS, args: [1], handle: priorityLevelStatus },
  { name: 'priority_level_log_level', contexts: LEVELS, args: [1], handle: priorityLevelLogLevel },
  { name: 'priority_level_dry_run', contexts: LEVELS, args: [1], handle: priorityLevelDryRun },
  { name: 'priority_level_headers', contexts: LEVELS, args: [1], handle: priorityLevelHeaders },
];
