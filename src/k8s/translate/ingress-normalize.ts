/**
 * One Ingress shape for the translator: `networking.k8s.io/v1` and the legacy `extensions/v1beta1`
 * (`serviceName`/`servicePort`, `spec.backend`) both become `NormalIngress`, with the fields checked
 * the way NIC's validation does (hosts, paths, backends) so nothing unchecked reaches the config text.
 */
import type { Ingress, IngressBackend, ObjectRef, TranslationProblem } from '../objects.ts';
import { refOf } from '../objects.ts';

export interface NormalBackend {
  readonly service: string;
  /** The Service port: a number, or a port name. */
  readonly port: number | string;
}

export type PathType = 'Prefix' | 'Exact' | 'ImplementationSpecific';

export interface NormalPath {
  readonly path: string;
  readonly pathType: PathType;
  readonly backend: NormalBackend;
  readonly field: string;
}

export interface NormalRule {
  /** Empty for a rule without a host (served by the default server). */
  readonly host: string;
  readonly paths: readonly NormalPath[];
  readonly field: string;
}

export interface NormalIngress {
  readonly ref: ObjectRef;
  readonly annotations: Readonly<Record<string, string>>;
  readonly className: string | null;
  readonly defaultBackend: NormalBackend | null;
  readonly tls: readonly { readonly hosts: readonly string[]; readonly secretName: string | null }[];
  readonly rules: readonly NormalRule[];
}

const HOST = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** No whitespace, braces, semicolons, quotes, backslashes or `#`: a path becomes a bare location argument. */
const PATH = /^\/[^\s{};"'\\#]*$/;
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The IngressClass an Ingress asks for: `spec.ingressClassName`, else the legacy annotation. */
export function ingressClassOf(ing: Ingress): string | null {
  return ing.spec?.ingressClassName ?? ing.metadata?.annotations?.['kubernetes.io/ingress.class'] ?? null;
}

function normalBackend(
  b: IngressBackend | undefined,
  field: string,
  object: ObjectRef,
  problems: TranslationProblem[],
): NormalBackend | null {
  const service = b?.service?.name ?? b?.serviceName;
  const port = b?.service?.port?.number ?? b?.service?.port?.name ?? b?.servicePort;
  if (typeof service !== 'string' || !NAME.test(service)) {
    problems.push({
      object,
      field: `${field}.service.name`,
      error: 'a Service backend is required',
      severity: 'error',
    });
    return null;
  }
  const okPort =
    (typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535) ||
    (typeof port === 'string' && /^[0-9]+$/.test(port) && Number(port) >= 1 && Number(port) <= 65535) ||
    (typeof port === 'string' && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(port));
  if (!okPort) {
    problems.push({
      object,
      field: `${field}.service.port`,
      error: `invalid value ${JSON.stringify(port ?? null)}: must be a port number or a port name`,
      severity: 'error',
    });
    return null;
  }
  // v1beta1 `servicePort: "80"` is an IntOrString holding a number.
  return { service, port: typeof port === 'string' && /^[0-9]+$/.test(port) ? Number(port) : port! };
}

export function normalizeIngress(ing: Ingress): { ingress: NormalIngress; problems: TranslationProblem[] } {
  const ref = refOf(ing, 'Ingress', 'networking.k8s.io/v1');
  const problems: TranslationProblem[] = [];
  const spec = ing.spec ?? {};
  const defaultRaw = spec.defaultBackend ?? spec.backend;
  const defaultField = spec.defaultBackend ? 'spec.defaultBackend' : 'spec.backend';
  const defaultBackend = defaultRaw ? normalBackend(defaultRaw, defaultField, ref, problems) : null;

  const rules: NormalRule[] = [];
  (spec.rules ?? []).forEach((rule, i) => {
    const field = `spec.rules[${i}]`;
    const host = rule.host ?? '';
    if (host !== '' && !HOST.test(host)) {
      problems.push({
        object: ref,
        field: `${field}.host`,
        error: `invalid value "${host}": must be a lower-case DNS name, optionally starting with "*."`,
        severity: 'error',
      });
      return;
    }
    const paths: NormalPath[] = [];
    (rule.http?.paths ?? []).forEach((p, j) => {
      const pf = `${field}.http.paths[${j}]`;
      const path = p.path === undefined || p.path === '' ? '/' : p.path;
      if (!PATH.test(path)) {
        problems.push({
          object: ref,
          field: `${pf}.path`,
          error: `invalid value "${path}": must start with "/" and contain no whitespace, braces, semicolons, quotes, backslashes or "#"`,
          severity: 'error',
        });
        return;
      }
      const pathType = p.pathType ?? 'ImplementationSpecific';
      if (pathType !== 'Prefix' && pathType !== 'Exact' && pathType !== 'ImplementationSpecific') {
        problems.push({
          object: ref,
          field: `${pf}.pathType`,
          error: `invalid value "${pathType}": must be Prefix, Exact or ImplementationSpecific`,
          severity: 'error',
        });
        return;
      }
      const backend = normalBackend(p.backend, `${pf}.backend`, ref, problems);
      if (backend) paths.push({ path, pathType, backend, field: pf });
    });
    rules.push({ host, paths, field });
  });

  const tls = (spec.tls ?? []).map((t) => ({
    hosts: [...(t.hosts ?? [])],
    secretName: t.secretName ?? null,
  }));
  const ingress: NormalIngress = {
    ref,
    annotations: { ...(ing.metadata?.annotations ?? {}) },
    className: ingressClassOf(ing),
    defaultBackend,
    tls,
    rules,
  };
  return { ingress, problems };
}
