/**
 * The Gateway API (v1.6.1 standard channel) and NGF RateLimitPolicy CRD schemas of
 * test/fixtures/gateway-api/, as ajv validators; `x-kubernetes-*` keywords are allowed (CEL rules cannot
 * be run here: tests that need them assert them themselves).
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';

interface CrdSchema {
  readonly group: string;
  readonly kind: string;
  readonly version: string;
  readonly openAPIV3Schema: object;
}

const FILES = ['gatewayclasses.v1', 'gateways.v1', 'httproutes.v1', 'ratelimitpolicies.v1alpha1'];

const ajv = new Ajv({ strict: false, allErrors: false });
const validators = new Map<string, ReturnType<typeof ajv.compile>>(
  FILES.map((f) => {
    const crd = JSON.parse(
      readFileSync(new URL(`../fixtures/gateway-api/${f}.json`, import.meta.url), 'utf8'),
    ) as CrdSchema;
    return [`${crd.group}/${crd.version} ${crd.kind}`, ajv.compile(crd.openAPIV3Schema)] as const;
  }),
);

/** Whether the schemas know `apiVersion kind`. */
export function hasGatewayApiSchema(apiVersion: string | undefined, kind: string | undefined): boolean {
  return validators.has(`${apiVersion} ${kind}`);
}

/** The first schema violation of `obj`, or null when it validates. */
export function gatewayApiSchemaError(obj: { apiVersion?: string; kind?: string }): string | null {
  const validate = validators.get(`${obj.apiVersion} ${obj.kind}`);
  if (!validate) return `no schema for ${obj.apiVersion} ${obj.kind}`;
  if (validate(obj)) return null;
  const e = validate.errors![0]!;
  return `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`;
}
