/**
 * GatewayClasses and Gateways → the listeners a replica serves. A class is ours when its
 * `controllerName` is limitswitch's; a Gateway of such a class gets its listeners checked: HTTP on 80
 * and HTTPS (TLS Terminate, one Secret of the Gateway's namespace) on 443 — the replica's own
 * `--listen-port` and `--tls-listen-port` serve them — and a hostname (with protocol) that an older
 * Gateway holds already is `Conflicted`. Each check failure is a listener condition, as the spec asks.
 */
import { byAge, keyOf } from '../objects.ts';
import type { TlsSecretView } from '../translate/tls-secrets.ts';
import { condition } from './conditions.ts';
import {
  CONTROLLER_NAME,
  type Condition,
  GATEWAY_GROUP,
  type Gateway,
  type GatewayClass,
  type Listener,
} from './gateway-objects.ts';

export type Scheme = 'http' | 'https';

export interface ListenerPlan {
  readonly gateway: Gateway;
  /** `namespace/name` of the Gateway. */
  readonly gatewayKey: string;
  readonly listener: Listener;
  readonly name: string;
  readonly scheme: Scheme;
  readonly hostname: string | undefined;
  /** The Secret of an HTTPS listener (in the Gateway's namespace). */
  readonly certificate: string | null;
  readonly allowsAllNamespaces: boolean;
  /** Whether routes can attach (conditions all good). */
  readonly usable: boolean;
  readonly conditions: readonly Condition[];
}

export interface GatewayPlan {
  readonly classes: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly listeners: readonly ListenerPlan[];
}

const PORTS: Record<Scheme, number> = { http: 80, https: 443 };

function checkListener(
  gw: Gateway,
  l: Listener,
  secrets: TlsSecretView,
): { scheme: Scheme | null; certificate: string | null; problem: Condition[] } {
  const ns = gw.metadata?.namespace ?? 'default';
  const bad = (type: string, reason: string, message: string) => ({
    scheme: null,
    certificate: null,
    problem: [condition(gw, type, false, reason, message)],
  });
  const protocol = l.protocol ?? '';
  if (protocol !== 'HTTP' && protocol !== 'HTTPS')
    return bad(
      'Accepted',
      'UnsupportedProtocol',
      `protocol ${protocol || '(none)'} is not supported; use HTTP or HTTPS`,
    );
  const scheme: Scheme = protocol === 'HTTP' ? 'http' : 'https';
  if (l.port !== PORTS[scheme])
    return bad(
      'Accepted',
      'PortUnavailable',
      `port ${l.port}: limitswitch serves ${protocol} listeners on port ${PORTS[scheme]} (the replica's ${scheme === 'http' ? '--listen-port' : '--tls-listen-port'})`,
    );
  const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from !== 'Same' && from !== 'All')
    return bad(
      'Accepted',
      'UnsupportedValue',
      `allowedRoutes.namespaces.from ${from} is not supported; use Same or All`,
    );
  const kinds = l.allowedRoutes?.kinds;
  if (
    kinds &&
    kinds.length > 0 &&
    !kinds.some((k) => (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === 'HTTPRoute')
  )
    return bad(
      'ResolvedRefs',
      'InvalidRouteKinds',
      'allowedRoutes.kinds names no HTTPRoute, the only kind served',
    );
  if (scheme === 'http') return { scheme, certificate: null, problem: [] };
  if ((l.tls?.mode ?? 'Terminate') !== 'Terminate')
    return bad('Accepted', 'UnsupportedValue', `tls.mode ${l.tls?.mode}: only Terminate is supported`);
  if (!l.hostname) return bad('Accepted', 'UnsupportedValue', 'an HTTPS listener needs a hostname here');
  const refs = l.tls?.certificateRefs ?? [];
  const ref = refs[0];
  if (!ref?.name || (ref.kind ?? 'Secret') !== 'Secret' || (ref.group ?? '') !== '')
    return bad('ResolvedRefs', 'InvalidCertificateRef', 'tls.certificateRefs must name a Secret');
  if ((ref.namespace ?? ns) !== ns)
    return bad(
      'ResolvedRefs',
      'RefNotPermitted',
      `Secret ${ref.namespace}/${ref.name}: other namespaces need a ReferenceGrant, which limitswitch does not read`,
    );
  if (secrets.file(ns, ref.name) === null)
    return bad(
      'ResolvedRefs',
      'InvalidCertificateRef',
      `Secret ${ns}/${ref.name} is missing or not a usable kubernetes.io/tls Secret`,
    );
  return { scheme, certificate: ref.name, problem: [] };
}

export function planGateways(
  classes: readonly GatewayClass[],
  gateways: readonly Gateway[],
  secrets: TlsSecretView,
): GatewayPlan {
  const ours = classes.filter((c) => c.spec?.controllerName === CONTROLLER_NAME);
  const names = new Set(ours.map((c) => c.metadata?.name ?? ''));
  const served = [...gateways].filter((g) => names.has(g.spec?.gatewayClassName ?? '')).sort(byAge);
  const claimed = new Map<string, string>();
  const listeners: ListenerPlan[] = [];
  for (const gw of served) {
    for (const l of gw.spec?.listeners ?? []) {
      const checked = checkListener(gw, l, secrets);
      const conditions: Condition[] = [...checked.problem];
      const claim = `${checked.scheme}:${l.hostname ?? ''}`;
      const holder = claimed.get(claim);
      if (checked.scheme !== null && holder !== undefined && holder !== keyOf(gw)) {
        conditions.push(
          condition(
            gw,
            'Conflicted',
            true,
            'HostnameConflict',
            `hostname "${l.hostname ?? '*'}" is served by Gateway ${holder}`,
          ),
        );
      } else if (checked.scheme !== null) claimed.set(claim, keyOf(gw));
      const usable = conditions.length === 0;
      if (usable) {
        conditions.push(
          condition(gw, 'Accepted', true, 'Accepted', 'Listener is accepted'),
          condition(gw, 'ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved'),
          condition(gw, 'Programmed', true, 'Programmed', 'Listener is programmed'),
          condition(gw, 'Conflicted', false, 'NoConflicts', 'No conflicts'),
        );
      } else {
        conditions.push(condition(gw, 'Programmed', false, 'Invalid', 'Listener is not programmed'));
      }
      listeners.push({
        gateway: gw,
        gatewayKey: keyOf(gw),
        listener: l,
        name: l.name ?? '',
        scheme: checked.scheme ?? 'http',
        hostname: l.hostname,
        certificate: checked.certificate,
        allowsAllNamespaces: l.allowedRoutes?.namespaces?.from === 'All',
        usable,
        conditions,
      });
    }
  }
  return { classes: ours, gateways: served, listeners };
}
