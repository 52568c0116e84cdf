/**
 * Multi-document YAML (what `kubectl apply -f` takes) → the objects the translator reads. `List`
 * documents are flattened; kinds we do not read are counted and skipped.
 */

import { parseAllDocuments } from 'yaml';
import { LimitswitchError } from '../shared/errors.ts';
import type { Gateway, GatewayClass, HTTPRoute, RateLimitPolicy } from './gateway/gateway-objects.ts';
import type { ConfigMap, EndpointSlice, Ingress, KubeObject, Secret, Service } from './objects.ts';

export interface YamlObjects {
  readonly ingresses: Ingress[];
  readonly services: Service[];
  readonly endpointSlices: EndpointSlice[];
  readonly configMaps: ConfigMap[];
  /** For Ingress `tls:` sections. */
  readonly secrets: Secret[];
  readonly gatewayClasses: GatewayClass[];
  readonly gateways: Gateway[];
  readonly httpRoutes: HTTPRoute[];
  readonly rateLimitPolicies: RateLimitPolicy[];
  /** Kinds present but not read (Deployments, …), with counts. */
  readonly skipped: Map<string, number>;
}

export function emptyObjects(): YamlObjects {
  return {
    ingresses: [],
    services: [],
    endpointSlices: [],
    configMaps: [],
    secrets: [],
    gatewayClasses: [],
    gateways: [],
    httpRoutes: [],
    rateLimitPolicies: [],
    skipped: new Map(),
  };
}

function add(into: YamlObjects, obj: KubeObject, source: string): void {
  if (obj === null || typeof obj !== 'object') return;
  const kind = obj.kind;
  if (kind === 'List' || (typeof kind === 'string' && kind.endsWith('List'))) {
    for (const item of (obj as { items?: KubeObject[] }).items ?? []) add(into, item, source);
    return;
  }
  if (typeof kind !== 'string')
    throw new LimitswitchError('RL_ERR_KUBERNETES_OBJECTS', `${source}: a document without kind`);
  const read = [
    'Ingress',
    'Service',
    'EndpointSlice',
    'ConfigMap',
    'Secret',
    'GatewayClass',
    'Gateway',
    'HTTPRoute',
    'RateLimitPolicy',
  ].includes(kind);
  if (!read) {
    into.skipped.set(kind, (into.skipped.get(kind) ?? 0) + 1);
    return;
  }
  if (typeof obj.metadata?.name !== 'string')
    throw new LimitswitchError('RL_ERR_KUBERNETES_OBJECTS', `${source}: a ${kind} without metadata.name`);
  if (kind === 'GatewayClass') {
    into.gatewayClasses.push(obj);
    return;
  }
  // Objects applied without a namespace land in "default", as kubectl does by default.
  const withNs = { ...obj, metadata: { ...obj.metadata, namespace: obj.metadata.namespace ?? 'default' } };
  if (kind === 'Ingress') into.ingresses.push(withNs);
  else if (kind === 'Service') into.services.push(withNs);
  else if (kind === 'EndpointSlice') into.endpointSlices.push(withNs);
  else if (kind === 'Secret') into.secrets.push(withNs);
  else if (kind === 'Gateway') into.gateways.push(withNs);
  else if (kind === 'HTTPRoute') into.httpRoutes.push(withNs);
  else if (kind === 'RateLimitPolicy') into.rateLimitPolicies.push(withNs);
  else into.configMaps.push(withNs);
}

/** Adds every document of `text` to `into`; `source` names the file in errors. */
export function readYamlObjects(
  text: string,
  source: string,
  into: YamlObjects = emptyObjects(),
): YamlObjects {
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const line = e.linePos?.[0]?.line;
      throw new LimitswitchError(
        'RL_ERR_KUBERNETES_OBJECTS',
        `${source}${line ? `:${line}` : ''}: ${e.message.split('\n')[0]}`,
      );
    }
    const value = doc.toJS() as KubeObject | null;
    if (value !== null && value !== undefined) add(into, value, source);
  }
  return into;
}
