/**
 * Latency at a fixed rate (latency-probe.ts, open loop): per upstream kind — the Node upstream, with
 * client connections kept, and Python's `http.server`, a fresh client connection per request as curl
 * makes — a direct call, nginx and the replica, on the configuration a new user writes (an `upstream`
 * block without `keepalive`; nginx: its defaults), each measured in turn (order rotated) over
 * LATENCY_ROUNDS rounds; samples are pooled over rounds. Added latency = the proxy's p50 (p99) minus
 * the direct call's. The setup says how many workers nginx runs and how the replica is started.
 */
import { once } from 'node:events';
import { startPythonUpstream } from '../../test/helpers/python-upstream.ts';
import {
  defaultUpstreamConf,
  LATENCY_CONNECTIONS,
  LATENCY_DURATION_MS,
  LATENCY_RATE,
  LATENCY_ROUNDS,
  quantile,
  round,
  startNginx,
  startNode,
} from './harness.ts';
import type { ProbeRequest, ProbeResult } from './latency-probe.ts';

export interface LatencySetup {
  /** nginx's `worker_processes`. */
  readonly nginxWorkers: number;
  /** Starts the replica in front of `upstreamPort` (a block without keepalive); resolves to its port. */
  startReplica(upstreamPort: number): Promise<number>;
  /** Put before every line this phase prints, and before every result field's name. */
  readonly linePrefix: string;
  readonly fieldPrefix: string;
}

/** The one-worker comparison: nginx with one worker, the replica's data path with the engine hook. */
export const ONE_WORKER: LatencySetup = {
  nginxWorkers: 1,
  startReplica: async (upstreamPort) =>
    (await startNode<{ port: number }>('proxy-main.ts', ['engine', String(upstreamPort), 'none'])).first.port,
  linePrefix: '',
  fieldPrefix: '',
};

const LATENCY_TARGETS = ['direct', 'nginx', 'replica'] as const;
type LatencyTarget = (typeof LATENCY_TARGETS)[number];

/**
 * Returns the added p50/p99 (the proxy's minus the direct call's) per kind, and the worst over kinds,
 * each field's name after `setup.fieldPrefix`.
 */
export async function latencyPhase(
  nodeUpstreamPort: number,
  setup: LatencySetup = ONE_WORKER,
): Promise<Record<string, number>> {
  const { linePrefix: say, fieldPrefix } = setup;
  const python = await startPythonUpstream();
  const stops: (() => void)[] = [];
  const kinds: { kind: string; fresh: boolean; ports: Record<LatencyTarget, number> }[] = [];
  for (const [kind, upstreamPort, fresh] of [
    ['node', nodeUpstreamPort, false],
    ['python', python.port, true],
  ] as const) {
    const nginx = await startNginx(upstreamPort, defaultUpstreamConf, setup.nginxWorkers);
    stops.push(nginx.stop);
    const replicaPort = await setup.startReplica(upstreamPort);
    kinds.push({
      kind,
      fresh,
      ports: { direct: upstreamPort, nginx: nginx.port, replica: replicaPort },
    });
  }
  const probe = (await startNode<unknown>('latency-probe.ts')).child;
  const ask = async (port: number, fresh: boolean, durationMs: number): Promise<ProbeResult> => {
    const request: ProbeRequest = {
      port,
      path: '/',
      ratePerS: LATENCY_RATE,
      durationMs,
      connections: LATENCY_CONNECTIONS,
      fresh,
    };
    probe.send(request);
    const [result] = (await once(probe, 'message')) as [ProbeResult];
    return result;
  };
  console.log('');
  console.log(
    `${say}latency: ${LATENCY_ROUNDS} rounds, ${LATENCY_RATE} req/s over ${LATENCY_CONNECTIONS} connections, ${LATENCY_DURATION_MS} ms per case; upstream blocks without keepalive`,
  );
  // warm-up: compilers, first connections, and the replica's first look at each server
  for (const { ports, fresh } of kinds) {
    for (const target of LATENCY_TARGETS) await ask(ports[target], fresh, 1000);
  }
  const samples = new Map<string, number[]>();
  for (let r = 0; r < LATENCY_ROUNDS; r++) {
    for (const { kind, ports, fresh } of kinds) {
      const order = LATENCY_TARGETS.map((_, i) => LATENCY_TARGETS[(i + r) % LATENCY_TARGETS.length]!);
      for (const target of order) {
        const result = await ask(ports[target], fresh, LATENCY_DURATION_MS);
        const key = `${kind} ${target}`;
        samples.set(key, [...(samples.get(key) ?? []), ...result.latenciesMs]);
        console.log(
          `${say}latency round ${r + 1}  ${kind.padEnd(6)} ${target.padEnd(7)} p50 ${quantile(result.latenciesMs, 0.5).toFixed(2).padStart(6)} ` +
            `p99 ${quantile(result.latenciesMs, 0.99).toFixed(2).padStart(6)} ms  (${result.latenciesMs.length} requests)` +
            (result.errors || result.non2xx ? `  errors ${result.errors} non-2xx ${result.non2xx}` : ''),
        );
      }
    }
  }
  const fields: Record<string, number> = {};
  console.log('');
  console.log(`${say}latency      direct p50/p99     nginx p50/p99 (added)          replica p50/p99 (added)`);
  for (const { kind } of kinds) {
    const at = (target: LatencyTarget, p: number) => quantile(samples.get(`${kind} ${target}`) ?? [], p);
    const added = (target: LatencyTarget, p: number) => at(target, p) - at('direct', p);
    fields[`${kind}_p50_added_ms`] = round(added('replica', 0.5), 2);
    fields[`${kind}_p99_added_ms`] = round(added('replica', 0.99), 2);
    fields[`${kind}_nginx_p50_added_ms`] = round(added('nginx', 0.5), 2);
    fields[`${kind}_nginx_p99_added_ms`] = round(added('nginx', 0.99), 2);
    const pair = (target: LatencyTarget) => `${at(target, 0.5).toFixed(2)}/${at(target, 0.99).toFixed(2)}`;
    const gain = (target: LatencyTarget) =>
      `(+${added(target, 0.5).toFixed(2)}/+${added(target, 0.99).toFixed(2)})`;
    console.log(
      `${say}${kind.padEnd(12)} ${pair('direct').padEnd(18)} ${`${pair('nginx')} ${gain('nginx')}`.padEnd(30)} ${pair('replica')} ${gain('replica')}`,
    );
  }
  const worst = (suffix: string) => Math.max(...kinds.map(({ kind }) => fields[`${kind}_${suffix}`]!));
  const result: Record<string, number> = {
    p50_added_ms: worst('p50_added_ms'),
    p99_added_ms: worst('p99_added_ms'),
    nginx_p50_added_ms: worst('nginx_p50_added_ms'),
    nginx_p99_added_ms: worst('nginx_p99_added_ms'),
    ...fields,
  };
  for (const stop of stops) stop();
  await python.stop();
  return Object.fromEntries(Object.entries(result).map(([name, value]) => [`${fieldPrefix}${name}`, value]));
}
