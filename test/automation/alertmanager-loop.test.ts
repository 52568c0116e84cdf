/**
 * The whole alert loop through real replicas, every part its own process: load on `/coffee` through
 * two replicas → Prometheus (scraping `limitswitch_location_requests_total` from each) fires
 * CoffeeOverloaded → Alertmanager posts to the control plane's webhook with a bearer token →
 * `limitreq_uri["/coffee"]` is set in Redis → every replica limits `/coffee` per client (503s) → the
 * alert keeps firing while the load lasts (limited requests still count) → the load stops → the alert
 * resolves → the key is deleted → `/coffee` answers 200 everywhere again. Each step prints its time.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import { keySchema } from '../../src/store/redis/keys.ts';
import { waitFor } from '../helpers/wait-for.ts';
import {
  ALERT,
  type AlertLoopStack,
  type AlertStatus,
  activeAlertmanagers,
  alertStatus,
  query,
  RULE,
  startAlertLoopStack,
  THRESHOLD_PER_S,
  TOKEN_ID,
  WINDOW_MS,
} from './alert-loop-stack.ts';
import { PacedLoad } from './paced-load.ts';

const REPLICAS = 2;
/** Each step's deadline: the loop takes seconds; this only keeps a broken loop from hanging. */
const STEP_TIMEOUT_MS = 30_000;
const POLL = { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 100 } as const;
/** examples/cafe: /coffee is limited per client by req_zone_20 (20 r/s, burst 1, nodelay). */
const BURST = 1;

interface AuditEntry {
  time: string;
  token_id: string | null;
  zone: string;
  key: string | null;
  old: string | null;
  new: string | null;
  revision: number;
  reason: string | null;
}

describe('alert loop through real replicas, Prometheus and Alertmanager', () => {
  let stack: AlertLoopStack | undefined;
  const loads: PacedLoad[] = [];
  after(async () => {
    for (const load of loads) await load.close();
    await stack?.stop();
  });

  it('load on /coffee limits it on every replica until the load stops, then it is unlimited again', {
    timeout: 150_000,
  }, async () => {
    const startedAtMs = Date.now();
    const at: Record<string, number> = {};
    const seconds = (atMs: number) => `${((atMs - startedAtMs) / 1000).toFixed(2)} s`;
    const step = (name: string, what: string, atMs = Date.now()) => {
      at[name] = atMs;
      console.log(`[${seconds(atMs).padStart(8)}] ${what}`);
    };

    stack = await startAlertLoopStack(REPLICAS);
    const { cluster, prometheus } = stack;
    const logs = stack.logs;
    /** Polls Prometheus until the alert is in `state`: when that was seen, and the poll before it. */
    const alertReaches = async (state: AlertStatus['state']) => {
      let status: AlertStatus | undefined;
      let seenAtMs = Date.now();
      let notYetAtMs = seenAtMs;
      await waitFor(
        async () => {
          notYetAtMs = seenAtMs;
          seenAtMs = Date.now();
          status = await alertStatus(prometheus, ALERT);
          return status.state === state;
        },
        { ...POLL, message: `${ALERT} ${state}\n${logs()}` },
      );
      return { status: status!, seenAtMs, notYetAtMs };
    };
    const replicas = cluster.replicas;
    step('up', `redis, upstreams, control plane, ${REPLICAS} replicas, alertmanager, prometheus answer`);

    const keyvals = async (statusUrl: string) =>
      (await request(`${statusUrl}/api/9/http/keyvals/limitreq_uri`)).body.json() as Promise<
        Record<string, string>
      >;
    const coffeeGet = async (url: string, client: string) => {
      const res = await request(`${url}/coffee`, {
        headers: { host: 'cafe.example.com', 'x-forwarded-for': client },
      });
      await res.body.dump();
      return res.statusCode;
    };
    const audit = async () =>
      ((await (await request(`${cluster.controlPlaneUrl}/audit?limit=50`)).body.json()) as AuditEntry[])
        .filter((e) => e.zone === 'limitreq_uri')
        .reverse();

    // One request per replica creates the /coffee series before the load: rate() has a start.
    for (const r of replicas) assert.equal(await coffeeGet(r.url, '10.0.0.1'), 200);
    const coffeeSeries = `limitswitch_location_requests_total{job="limitswitch-replica",location="location /coffee"}`;
    await waitFor(
      async () =>
        (await query(prometheus, `count(${coffeeSeries})`))[0] === REPLICAS &&
        (await activeAlertmanagers(prometheus)) === 1,
      { ...POLL, message: `prometheus scraping ${REPLICAS} replicas and knowing alertmanager\n${logs()}` },
    );
    assert.equal((await alertStatus(prometheus, ALERT)).state, 'inactive');
    step('ready', `prometheus scrapes every replica's /coffee count and sends alerts to alertmanager`);

    const coffee = new PacedLoad(
      replicas.map((r) => r.url),
      { path: '/coffee', clients: ['10.0.1.1', '10.0.1.2', '10.0.1.3'], perTick: BURST + 1, tickMs: 50 },
    );
    const tea = new PacedLoad(
      replicas.map((r) => r.url),
      { path: '/tea', clients: ['10.0.2.1'], perTick: 1, tickMs: 250 },
    );
    loads.push(coffee, tea);
    coffee.start();
    tea.start();
    step(
      'load',
      `load on /coffee: ${coffee.ratePerS} requests/s from 3 clients (threshold ${THRESHOLD_PER_S}/s); ` +
        `/tea ${tea.ratePerS} requests/s`,
    );

    const firing = await alertReaches('firing');
    step('pending', `prometheus: ${ALERT} pending (activeAt; for: 2s)`, firing.status.activeAtMs!);
    step(
      'firing',
      `prometheus: ${ALERT} firing (seen by polling; the poll at ${seconds(firing.notYetAtMs)} was not)`,
      firing.seenAtMs,
    );

    let set: AuditEntry | undefined;
    await waitFor(
      async () => {
        set = (await audit()).find((e) => e.key === '/coffee' && e.new === '1');
        return set !== undefined;
      },
      { ...POLL, message: `the webhook setting /coffee\n${logs()}` },
    );
    step(
      'set',
      `alertmanager → webhook: limitreq_uri["/coffee"]="1" (revision ${set!.revision})`,
      Date.parse(set!.time),
    );
    assert.equal(set!.token_id, TOKEN_ID);
    const fired = new RegExp(`^alert ${ALERT} firing \\(fingerprint ([0-9a-f]{16}), rule ${RULE}\\)$`).exec(
      set!.reason ?? '',
    );
    assert.ok(fired, set!.reason ?? 'no reason');
    // The rule's TTL is the key's expiry in the store: a lost `resolved` cannot leave it on.
    const stored = JSON.parse(
      await cluster.redis.cli('HGET', keySchema().zone('limitreq_uri'), '/coffee'),
    ) as { value: string; expireAtMs: number };
    assert.equal(stored.value, '1');
    assert.ok(stored.expireAtMs > Date.parse(set!.time) + 9 * 60_000, `expiry ${stored.expireAtMs}`);

    await coffee.answeredEverywhere(503, STEP_TIMEOUT_MS);
    const firstRejected = coffee.firstAnswer(503) as number[];
    for (const r of replicas) assert.deepEqual(await keyvals(r.statusUrl), { '/coffee': '1' }, r.id);
    step(
      'limited',
      `/coffee limited on every replica: limitreq_uri["/coffee"] there, 503s ${firstRejected
        .map((t) => `+${t - Date.parse(set!.time)} ms`)
        .join(', ')} after the write`,
      Math.max(...firstRejected),
    );

    // Hysteresis: a rule evaluation whose whole rate window lies in the limited phase still fires.
    const limitedWindowEndMs = Math.max(...firstRejected) + WINDOW_MS;
    await waitFor(
      async () => {
        const body = await prometheus.api<{ data: { groups: { lastEvaluation: string }[] } }>(
          '/api/v1/rules',
        );
        return Date.parse(body.data.groups[0]?.lastEvaluation ?? '') > limitedWindowEndMs;
      },
      { ...POLL, message: 'a rule evaluation over a limited window' },
    );
    assert.equal((await alertStatus(prometheus, ALERT)).state, 'firing');
    const [counted = 0] = await query(prometheus, `sum(rate(${coffeeSeries}[${WINDOW_MS / 1000}s]))`);
    assert.ok(counted > THRESHOLD_PER_S, `${counted} requests/s counted while limited`);
    assert.deepEqual(
      (await audit()).map((e) => e.new),
      ['1'],
      'no change while the alert fires',
    );
    for (const r of replicas) assert.deepEqual(await keyvals(r.statusUrl), { '/coffee': '1' });
    const rejected = coffee.countByReplica(503).reduce((a, b) => a + b, 0);
    step(
      'held',
      `still firing over a limited window: ${counted.toFixed(0)} requests/s counted, ` +
        `${rejected} of ${coffee.shots.length} requests rejected so far`,
    );

    const shots = await coffee.stop();
    step(
      'stopped',
      `load on /coffee stopped: ${shots.length} requests, 200 per replica ` +
        `${coffee.countByReplica(200).join('/')}, 503 per replica ${coffee.countByReplica(503).join('/')}`,
    );

    const resolved = await alertReaches('inactive');
    step(
      'resolved',
      `prometheus: ${ALERT} resolved (seen by polling; the poll at ${seconds(resolved.notYetAtMs)} was not)`,
      resolved.seenAtMs,
    );

    let removed: AuditEntry | undefined;
    await waitFor(
      async () => {
        removed = (await audit()).find((e) => e.key === '/coffee' && e.new === null);
        return removed !== undefined;
      },
      { ...POLL, message: `the webhook deleting /coffee\n${logs()}` },
    );
    step(
      'deleted',
      `alertmanager → webhook: limitreq_uri["/coffee"] deleted (revision ${removed!.revision})`,
      Date.parse(removed!.time),
    );
    assert.equal(removed!.reason, `alert ${ALERT} resolved (fingerprint ${fired[1]}, rule ${RULE})`);
    assert.deepEqual([removed!.old, removed!.token_id], ['1', TOKEN_ID]);

    await waitFor(
      async () => {
        for (const r of replicas) if ('/coffee' in (await keyvals(r.statusUrl))) return false;
        return true;
      },
      { ...POLL, message: '/coffee switched off on every replica' },
    );
    step('cleared', 'limitreq_uri["/coffee"] gone on every replica');

    // Three at once from one client: with the limit on, only 1 + burst would pass.
    for (const r of replicas) {
      const statuses = await Promise.all([0, 1, 2].map(() => coffeeGet(r.url, '10.0.3.1')));
      assert.deepEqual(statuses, [200, 200, 200], `${r.id} after the alert resolved`);
    }
    step('unlimited', '/coffee answers 200 on every replica again');

    // What the clients saw: only 200s until the alert fired (a poll saw it not firing yet, so no write
    // had happened), 200 or 503 after it.
    for (const status of new Set(shots.map((s) => s.status)))
      assert.ok([200, 503].includes(status), `${status}`);
    for (let i = 0; i < REPLICAS; i++) {
      const id = replicas[i]!.id;
      assert.ok(firstRejected[i]! > firing.notYetAtMs, `${id} limited before the alert fired`);
      assert.ok(
        shots.some((s) => s.replica === i && s.status === 200 && s.answeredAtMs < firing.notYetAtMs),
        `${id} served the load before the alert fired`,
      );
    }
    const teaShots = await tea.stop();
    assert.deepEqual([...new Set(teaShots.map((s) => s.status))], [200], '/tea is never limited');
    // Exactly one switch on and one off, /coffee only, and the control plane counted them by rule.
    assert.deepEqual(
      (await audit()).map((e) => `${e.key} ${e.old} → ${e.new}`),
      ['/coffee null → 1', '/coffee 1 → null'],
    );
    const metrics = await (await request(`${cluster.controlPlaneUrl}/metrics`)).body.text();
    for (const action of ['set', 'delete']) {
      assert.match(
        metrics,
        new RegExp(`limitswitch_automation_changes_total\\{rule="${RULE}",action="${action}"\\} 1\\n`),
      );
    }

    const s = (from: string, to: string) => `${((at[to]! - at[from]!) / 1000).toFixed(1)} s`;
    console.log(
      `loop: load → webhook set ${s('load', 'set')} → 503s everywhere ${s('load', 'limited')}; ` +
        `load stopped → webhook delete ${s('stopped', 'deleted')} → unlimited everywhere ` +
        `${s('stopped', 'unlimited')}; load → unlimited ${s('load', 'unlimited')}`,
    );
    assert.ok(at.unlimited! - at.load! < 60_000, 'the loop is bounded well under a minute');
  });
});
