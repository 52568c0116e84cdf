/**
 * The Kubernetes objects the translator reads, as plain data (the JSON the API server sends, or YAML
 * parsed by `render`). Only the fields we use are typed; everything is optional because objects from
 * users are untrusted until validated.
 */

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string | Date;
  readonly generation?: number;
  readonly annotations?: Readonly<Record<string, string>> | null;
  readonly labels?: Readonly<Record<string, string>> | null;
}

export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
}

/** `networking.k8s.io/v1` backend; the legacy fields (`serviceName`, `servicePort`) are `extensions/v1beta1`. */
export interface IngressBackend {
  readonly service?: {
    readonly name?: string;
    readonly port?: { readonly number?: number; readonly name?: string };
  };
  readonly serviceName?: string;
  readonly servicePort?: number | string;
}

export interface HttpIngressPath {
  readonly path?: string;
  readonly pathType?: string;
  readonly backend?: IngressBackend;
}

export interface IngressRule {
  readonly host?: string;
  readonly http?: { readonly paths?: readonly HttpIngressPath[] } | null;
}

export interface Ingress extends KubeObject {
  readonly spec?: {
    readonly ingressClassName?: string;
    readonly defaultBackend?: IngressBackend;
    /** `extensions/v1beta1` name of `defaultBackend`. */
    readonly backend?: IngressBackend;
    readonly tls?: readonly { readonly hosts?: readonly string[]; readonly secretName?: string }[];
    readonly rules?: readonly IngressRule[];
  };
}

/** A Secret; `kubernetes.io/tls` ones carry `tls.crt` and `tls.key` (base64) in `data`. */
export interface Secret extends KubeObject {
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>> | null;
}

export interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>> | null;
}

export interface ServicePort {
  readonly name?: string;
  readonly port?: number;
  readonly targetPort?: number | string;
  readonly protocol?: string;
}

export interface Service extends KubeObject {
  readonly spec?: {
    readonly type?: string;
    readonly ports?: readonly ServicePort[];
    readonly externalName?: string;
  };
}

export interface EndpointSlice extends KubeObject {
  readonly addressType?: string;
  readonly endpoints?: readonly {
    readonly addresses?: readonly string[];
    readonly conditions?: { readonly ready?: boolean | null; readonly terminating?: boolean | null };
  }[];
  readonly ports?: readonly {
    readonly name?: string | null;
    readonly port?: number;
    readonly protocol?: string;
  }[];
}

/** Which object a problem or a fragment belongs to (what a Kubernetes Event's `involvedObject` needs). */
export interface ObjectRef {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export function refOf(obj: KubeObject, kind: string, apiVersion: string): ObjectRef {
  const meta = obj.metadata ?? {};
  return {
    kind: obj.kind ?? kind,
    apiVersion: obj.apiVersion ?? apiVersion,
    namespace: meta.namespace ?? 'default',
    name: meta.name ?? '',
    ...(meta.uid ? { uid: meta.uid } : {}),
    ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
  };
}

/** `namespace/name`, the way kubectl and NIC's log lines name an object. */
export function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? 'default'}/${obj.metadata?.name ?? ''}`;
}

/** Creation time in ms since the epoch; missing timestamps sort last (newest). */
export function createdMs(obj: KubeObject): number {
  const ts = obj.metadata?.creationTimestamp;
  if (ts === undefined) return Number.POSITIVE_INFINITY;
  const ms = ts instanceof Date ? ts.getTime() : Date.parse(ts);
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/** Oldest first, then by `namespace/name`: NIC's order for "the oldest wins" conflicts. */
export function byAge(a: KubeObject, b: KubeObject): number {
  const d = createdMs(a) - createdMs(b);
  if (d !== 0 && !Number.isNaN(d)) return d < 0 ? -1 : 1;
  const ka = keyOf(a);
  const kb = keyOf(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** A problem found while translating one object; the caller turns it into an Event and a log line. */
export interface TranslationProblem {
  readonly object: ObjectRef;
  /** JSON-path-like field, e.g. `metadata.annotations[nginx.org/limit-req-rate]`. */
  readonly field: string;
  readonly error: string;
  /** `error`: the object's new version was rejected (its last good one is kept); `warning`: partly applied. */
  readonly severity: 'error' | 'warning';
  /** For a rejected object: whether its last good version is still served. */
  readonly keptLastGood?: boolean;
}
