/**
 * Shared setup for control-plane tests: an app on a store (inject), response checks against the spec,
 * and the NGINX error-shape assertion.
 */
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import {
  type ControlPlaneOptions,
  controlPlane,
  controlPlaneServerOptions,
} from '../../src/control-plane/app.ts';
import { loadApiSpec, type SpecOperation } from '../../src/control-plane/spec.ts';
import type { KeyvalZoneInfo, ReplicaInfo } from '../../src/store/cluster-registry.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import type { Store } from '../../src/store/store.ts';

export const ZONES: readonly KeyvalZoneInfo[] = [
  { name: 'zone_one', type: 'string', timeoutMs: null, sizeBytes: null },
  { name: 'ttl', type: 'string', timeoutMs: 60_000, sizeBytes: null },
  { name: 'ips', type: 'ip', timeoutMs: null, sizeBytes: null },
  { name: 'prefixes', type: 'prefix', timeoutMs: null, sizeBytes: null },
];

export interface TestApp {
  readonly app: FastifyInstance;
  readonly store: Store;
}

/** An app on a fresh memory store (or the given one), zones registered as replicas would. */
export async function buildApp(
  options: Omit<Partial<ControlPlaneOptions>, 'store'> & { store?: Store } = {},
): Promise<TestApp> {
  const store = options.store ?? openMemoryStore();
  await store.registry.registerZones(ZONES);
  const app = Fastify({ logger: false, ...controlPlaneServerOptions() });
  await app.register(controlPlane, { ...options, store });
  await app.ready();
  return { app, store };
}

export function replicaInfo(id: string, appliedRevision: number, limitReqZones: string[] = []): ReplicaInfo {
  return {
    id,
    version: '0.1.0',
    configHash: 'abc123',
    appliedRevision,
    appliedCommit: '',
    startedAtMs: 1_700_000_000_000,
    keyvalZones: [...ZONES],
    limitReqZones,
  };
}

/** Assert the NGINX Plus error body, exactly. */
export function assertNginxError(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  status: number,
  code: string,
  text?: string,
): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  const error = body.error as Record<string, unknown>;
  assert.equal(error.status, status);
  assert.equal(error.code, code);
  if (text !== undefined) assert.equal(error.text, text);
  assert.match(String(body.request_id), /^[0-9a-f]{32}$/);
  assert.equal(body.href, 'https://nginx.org/en/docs/http/ngx_http_api_module.html');
}

/** True when `body` has the NGINX error shape (for property tests). */
export function isNginxError(status: number, text: string): boolean {
  try {
    const body = JSON.parse(text) as {
      error?: { status?: unknown; text?: unknown; code?: unknown };
      request_id?: unknown;
    };
    return (
      body.error?.status === status &&
      typeof body.error.text === 'string' &&
      typeof body.error.code === 'string' &&
      typeof body.request_id === 'string' &&
      /^[0-9a-f]{32}$/.test(body.request_id)
    );
  } catch {
    return false;
  }
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

/** Check a JSON response against the spec's schema for that operation and status. */
export function assertMatchesSpec(
  operationId: string,
  res: LightMyRequestResponse | { statusCode: number; body: string },
): void {
  const schema = loadApiSpec().operation(operationId).schema.response?.[String(res.statusCode)];
  assert.ok(schema, `no response schema for ${operationId} ${res.statusCode}`);
  const validate = ajv.compile(schema);
  const ok = validate(JSON.parse(res.body));
  assert.ok(ok, `${operationId} ${res.statusCode}: ${ajv.errorsText(validate.errors)}\n${res.body}`);
}

export const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** The spec operation a concrete request path is routed to (static segments win over parameters). */
export function operationFor(method: string, path: string): SpecOperation | undefined {
  const candidates = loadApiSpec().operations.filter(
    (op) =>
      op.method === method &&
      op.routePaths.some((template) => {
        const pattern = template
          .split('/')
          .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/');
        return new RegExp(`^${pattern}$`).test(path);
      }),
  );
  return candidates.sort(
    (a, b) => b.path.replace(/\{[^}]+\}/g, '').length - a.path.replace(/\{[^}]+\}/g, '').length,
  )[0];
}

let batchSeq = 0;

/** Add limit_req counter deltas for a replica, as its flusher would (one new batch each call). */
export async function addCounters(
  store: Pick<Store, 'counters'>,
  replicaId: string,
  deltas: Record<string, Record<string, number>>,
  kind = 'limit_req',
): Promise<void> {
  batchSeq += 1;
  await store.counters.add({ replicaId, incarnation: 'test', seq: batchSeq, deltas: { [kind]: deltas } });
}
