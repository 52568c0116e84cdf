/**
 * `api-spec/openapi.yaml` is the one API schema. This loader turns each operation into what fastify
 * needs (path, method, JSON schemas for params/query/body/2xx responses) and keeps the spec's own
 * extensions (`x-trailing-slash`, `x-min-version`, `x-listed`, `x-write`) so routes, the root endpoint
 * lists and the drift test all read the same document.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { LimitswitchError } from '../shared/errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PATCH', 'DELETE'];

/** JSON Schema as ajv and fast-json-stringify take it. */
export type JsonSchema = Record<string, unknown>;

export interface RouteSchema {
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  response?: Record<string, JsonSchema>;
}

export interface SpecOperation {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** As the spec writes it: `/api/{version}/http/keyvals/{zone}`. */
  readonly path: string;
  /** Fastify paths serving it: the `:param` form, plus the trailing-slash twin when allowed. */
  readonly routePaths: readonly string[];
  /** First API version with this endpoint (1 when not versioned). */
  readonly minVersion: number;
  /** Under `/api/{version}/`. */
  readonly versioned: boolean;
  /**
   * POST/PATCH/DELETE that change state: token, CIDR and read-only checks apply, then the browser
   * checks (Host, Origin, Content-Type).
   */
  readonly write: boolean;
  readonly schema: RouteSchema;
}

export interface ApiSpec {
  /** The document as written (for `/docs/openapi.yaml`). */
  readonly yamlText: string;
  /** The parsed document (for `/docs/openapi.json`). */
  readonly document: Readonly<Record<string, unknown>>;
  readonly operations: readonly SpecOperation[];
  operation(operationId: string): SpecOperation;
  /** Names listed by `GET /api/{v}/` (`prefix` = `/api/{version}`) or `/api/{v}/http/`, for version `v`. */
  endpointNames(prefix: string, version: number): string[];
}

const SPEC_FILE = fileURLToPath(new URL('../../api-spec/openapi.yaml', import.meta.url));

let cached: ApiSpec | null = null;

/** The spec, parsed once per process. */
export function loadApiSpec(): ApiSpec {
  cached ??= parseApiSpec(readFileSync(SPEC_FILE, 'utf8'));
  return cached;
}

/** Parse a spec text (exported for tests that feed a broken one). */
export function parseApiSpec(yamlText: string): ApiSpec {
  const document = parse(yamlText) as Record<string, unknown>;
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  const operations: SpecOperation[] = [];
  const byId = new Map<string, SpecOperation>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method.toLowerCase()] as Record<string, unknown> | undefined;
      if (!op) continue;
      const operation = toOperation(document, path, item, method, op);
      if (byId.has(operation.operationId))
        throw new LimitswitchError('RL_ERR_API_SPEC', `duplicate operationId ${operation.operationId}`);
      byId.set(operation.operationId, operation);
      operations.push(operation);
    }
  }
  return {
    yamlText,
    document,
    operations,
    operation(operationId) {
      const found = byId.get(operationId);
      if (!found)
        throw new LimitswitchError(
          'RL_ERR_API_SPEC',
          `operation ${operationId} is not in api-spec/openapi.yaml`,
        );
      return found;
    },
    endpointNames(prefix, version) {
      const names: string[] = [];
      for (const [path, item] of Object.entries(paths)) {
        if (!path.startsWith(`${prefix}/`) || item['x-listed'] !== true) continue;
        const name = path.slice(prefix.length + 1);
        if (name.includes('/')) continue;
        if (((item['x-min-version'] as number | undefined) ?? 1) <= version) names.push(name);
      }
      return names;
    },
  };
}

function toOperation(
  document: Record<string, unknown>,
  path: string,
  item: Record<string, unknown>,
  method: HttpMethod,
  op: Record<string, unknown>,
): SpecOperation {
  const operationId = op.operationId;
  if (typeof operationId !== 'string')
    throw new LimitswitchError('RL_ERR_API_SPEC', `${method} ${path} has no operationId`);
  const base = path.replace(/\{([^}]+)\}/g, ':$1');
  const routePaths = item['x-trailing-slash'] === true ? [base, `${base}/`] : [base];
  const parameters = [
    ...((item.parameters as unknown[] | undefined) ?? []),
    ...((op.parameters as unknown[] | undefined) ?? []),
  ].map((p) => resolve(document, p) as Record<string, unknown>);
  const schema: RouteSchema = {};
  const params = objectSchema(document, parameters, 'path');
  if (params) schema.params = params;
  const querystring = objectSchema(document, parameters, 'query');
  if (querystring) schema.querystring = querystring;
  const body = jsonContentSchema(document, op.requestBody);
  if (body) schema.body = body;
  const response: Record<string, JsonSchema> = {};
  for (const [code, value] of Object.entries((op.responses ?? {}) as Record<string, unknown>)) {
    if (!code.startsWith('2')) continue;
    const json = jsonContentSchema(document, value);
    if (json) response[code] = json;
  }
  if (Object.keys(response).length > 0) schema.response = response;
  return {
    operationId,
    method,
    path,
    routePaths,
    minVersion: (item['x-min-version'] as number | undefined) ?? 1,
    versioned: path.startsWith('/api/{version}'),
    write: op['x-write'] === true,
    schema,
  };
}

function objectSchema(
  document: Record<string, unknown>,
  parameters: readonly Record<string, unknown>[],
  where: 'path' | 'query',
): JsonSchema | null {
  const selected = parameters.filter((p) => p.in === where);
  if (selected.length === 0) return null;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of selected) {
    const name = p.name as string;
    properties[name] = toJsonSchema(document, p.schema ?? {});
    if (p.required === true) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function jsonContentSchema(document: Record<string, unknown>, holder: unknown): JsonSchema | null {
  const resolved = resolve(document, holder) as
    | { content?: Record<string, { schema?: unknown }> }
    | undefined;
  const schema = resolved?.content?.['application/json']?.schema;
  return schema === undefined ? null : (toJsonSchema(document, schema) as JsonSchema);
}

/** Follow a local `$ref` (one level; callers recurse). */
function resolve(document: Record<string, unknown>, node: unknown): unknown {
  if (!isObject(node) || typeof node.$ref !== 'string') return node;
  const ref = node.$ref;
  if (!ref.startsWith('#/'))
    throw new LimitswitchError('RL_ERR_API_SPEC', `only local $ref is supported: ${ref}`);
  let target: unknown = document;
  for (const part of ref.slice(2).split('/')) target = isObject(target) ? target[part] : undefined;
  if (target === undefined) throw new LimitswitchError('RL_ERR_API_SPEC', `unresolved $ref ${ref}`);
  return resolve(document, target);
}

/** OpenAPI 3.0 schema → self-contained JSON Schema: refs inlined, annotations ajv would reject dropped. */
function toJsonSchema(document: Record<string, unknown>, node: unknown): unknown {
  const resolved = resolve(document, node);
  if (Array.isArray(resolved)) return resolved.map((n) => toJsonSchema(document, n));
  if (!isObject(resolved)) return resolved;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resolved)) {
    if (key === 'example' || key === 'examples' || key.startsWith('x-')) continue;
    // `properties` maps names to schemas; `enum`/`required` hold data, not schemas.
    if (key === 'properties' && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(document, v)]));
    } else if (key === 'enum' || key === 'required' || key === 'default') {
      out[key] = value;
    } else {
      out[key] = toJsonSchema(document, value);
    }
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
