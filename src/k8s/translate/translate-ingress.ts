/**
 * One Ingress → its fragment. Checks the mergeable rules NIC enforces (a master has one host and no
 * paths; a minion has one host and no TLS, inherits the master's inheritable annotations and loses
 * server-level ones), parses every annotation through the registry, and builds locations with their
 * snippets, `proxy_pass` to NIC-named upstreams and the generated `limit_req` lines.
 */
import { createdMs, type KubeObject, type ObjectRef, type TranslationProblem } from '../objects.ts';
import {
  ANNOTATION_IDS,
  ANNOTATIONS,
  annotationField,
  inheritFromMaster,
  readAnnotations,
  unreadAnnotations,
} from './annotations.ts';
import { type BackendIndex, resolveBackend } from './backends.ts';
import type { GlobalSettings } from './configmap-settings.ts';
import type {
  IngressFragment,
  IngressRole,
  LocationFragment,
  ServerFragment,
  UpstreamFragment,
} from './fragment.ts';
import type { NormalBackend, NormalIngress } from './ingress-normalize.ts';
import { ingressNginxLimits } from './limit-req-ingress-nginx.ts';
import { nicLimitReq } from './limit-req-nic.ts';
import { routePath, routingConflict, serverRewriteLines } from './routing-annotations.ts';

export interface IngressContext {
  readonly settings: GlobalSettings;
  readonly backends: BackendIndex;
  /** Live replica count for `limit-req-scale`; null when unknown (no scaling). */
  readonly replicas: number | null;
  /** For a minion: its master's annotations (the inheritable ones are merged in). */
  readonly masterAnnotations?: Readonly<Record<string, string>>;
}

export interface IngressTranslation {
  /** Null when the Ingress is rejected (see the `error` problems). */
  readonly fragment: IngressFragment | null;
  readonly problems: readonly TranslationProblem[];
}

const MERGEABLE = ANNOTATIONS.mergeableType.name;

/** `master`, `minion` or `plain`; an invalid value is reported by `readAnnotations`. */
export function roleOf(annotations: Readonly<Record<string, string>>): IngressRole {
  const v = annotations[MERGEABLE]?.trim();
  return v === 'master' || v === 'minion' ? v : 'plain';
}

/** NIC's `<ns>-<ingress>-<host>-<service>-<port>`; the `*` of a wildcard host, not valid in a `proxy_pass` host, becomes `_`. */
function upstreamName(ref: ObjectRef, host: string, b: NormalBackend): string {
  return `${ref.namespace}-${ref.name}-${host}-${b.service}-${b.port}`.replaceAll('*', '_');
}

function checkMergeable(ing: NormalIngress, role: IngressRole, problems: TranslationProblem[]): void {
  const err = (field: string, error: string) =>
    problems.push({ object: ing.ref, field, error, severity: 'error' });
  if (role === 'plain') return;
  if (ing.rules.length !== 1 || ing.rules[0]!.host === '') {
    err('spec.rules', `a ${role} must have exactly one rule with a host`);
    return;
  }
  if (role === 'master' && ing.rules[0]!.paths.length > 0) {
    err('spec.rules[0].http.paths', 'a master cannot have paths; put them in minions');
  }
  if (role === 'minion' && ing.tls.length > 0)
    err('spec.tls', 'a minion cannot have TLS; put it in the master');
}

export function translateIngress(
  ing: NormalIngress,
  source: KubeObject,
  ctx: IngressContext,
): IngressTranslation {
  const problems: TranslationProblem[] = [];
  const role = roleOf(ing.annotations);
  checkMergeable(ing, role, problems);

  let raw: Record<string, string> = { ...ing.annotations };
  if (role === 'minion') {
    for (const id of ANNOTATION_IDS) {
      const def = ANNOTATIONS[id];
      if (!def.onMinion && raw[def.name] !== undefined) {
        problems.push({
          object: ing.ref,
          field: annotationField(def.name),
          error: 'not allowed on a minion (server-level settings belong to the master); ignored',
          severity: 'warning',
        });
        delete raw[def.name];
      }
    }
    if (ctx.masterAnnotations) raw = inheritFromMaster(raw, ctx.masterAnnotations);
  }
  const { values, problems: annotationProblems } = readAnnotations(raw, ing.ref);
  problems.push(...annotationProblems);
  // what a controller's annotation asks for and nothing here reads is named, never passed by
  for (const unread of unreadAnnotations(ing.annotations))
    problems.push({
      object: ing.ref,
      field: annotationField(unread),
      error: 'not carried over (limitswitch does not read it)',
      severity: 'warning',
    });
  const conflict = routingConflict(values);
  if (conflict !== null)
    problems.push({ object: ing.ref, field: 'metadata.annotations', error: conflict, severity: 'error' });
  if (problems.some((p) => p.severity === 'error')) return { fragment: null, problems };

  const { namespace, name } = ing.ref;
  const httpBlocks: { lines: string[]; field: string }[] = [];
  const nic = nicLimitReq(values, namespace, name, ctx.replicas, values.zoneSync ?? ctx.settings.zoneSync);
  if (nic?.warning && role !== 'master') {
    problems.push({
      object: ing.ref,
      field: annotationField(ANNOTATIONS.limitReqScale.name),
      error: nic.warning,
      severity: 'warning',
    });
  }
  const ingNginx = ingressNginxLimits(
    values,
    namespace,
    name,
    ing.ref.uid ?? '',
    ctx.settings.limitConnZoneVariable,
    values.zoneSync ?? false,
  );
  // A master has no locations of its own, so its zone would be unused (NIC does not write it either).
  if (role !== 'master') {
    // A zone line fails on its key (rate and size are checked already).
    const nicField = annotationField(
      values.limitReqKey !== undefined ? ANNOTATIONS.limitReqKey.name : ANNOTATIONS.limitReqRate.name,
    );
    if (nic) httpBlocks.push({ lines: [`# Ingress ${namespace}/${name}`, nic.zoneLine], field: nicField });
    if (ingNginx) {
      const field = annotationField(values.limitRps ? ANNOTATIONS.limitRps.name : ANNOTATIONS.limitRpm.name);
      httpBlocks.push({ lines: [...ingNginx.httpLines], field });
    }
  }
  const limitLines = [...(nic?.locationLines ?? []), ...(ingNginx?.locationLines ?? [])];
  const snippets = values.locationSnippets ?? ctx.settings.locationSnippets;
  const snippetsField = values.locationSnippets
    ? annotationField(ANNOTATIONS.locationSnippets.name)
    : 'ConfigMap data[location-snippets]';
  const comments = role === 'minion' ? [`# location for minion ${namespace}/${name}`] : [];
  // what every location of the Ingress carries besides its own routing
  const routed = {
    moreSnippets: values.configurationSnippet
      ? [
          {
            lines: values.configurationSnippet,
            field: annotationField(ANNOTATIONS.configurationSnippet.name),
          },
        ]
      : [],
    serverLines: serverRewriteLines(values),
  };

  const upstreams = new Map<string, UpstreamFragment>();
  const upstreamFor = (host: string, b: NormalBackend): string => {
    const un = upstreamName(ing.ref, host, b);
    if (!upstreams.has(un)) {
      const resolved = resolveBackend(ctx.backends, namespace, b);
      upstreams.set(un, { name: un, servers: resolved.servers, note: resolved.note });
    }
    return un;
  };

  const servers: ServerFragment[] = [];
  const rules =
    ing.rules.length > 0 || !ing.defaultBackend ? ing.rules : [{ host: '', paths: [], field: 'spec' }];
  for (const rule of rules) {
    const locations: LocationFragment[] = [];
    const seen = new Set<string>();
    for (const p of rule.paths) {
      const routing = routePath(values, p);
      const id = `${routing.match} ${routing.path}`;
      if (seen.has(id)) {
        problems.push({
          object: ing.ref,
          field: `${p.field}.path`,
          error: `duplicate path "${p.path}" for host "${rule.host}"; the first one is used`,
          severity: 'warning',
        });
        continue;
      }
      seen.add(id);
      const upstream = upstreamFor(rule.host, p.backend);
      locations.push({
        match: routing.match,
        path: routing.path,
        owner: `${namespace}/${name}`,
        comments,
        snippets,
        snippetsField,
        ...routed,
        upstream,
        ...(routing.proxyPassUri === '' ? {} : { proxyPass: `http://${upstream}${routing.proxyPassUri}` }),
        rewriteLines: routing.rewriteLines,
        regexHost: routing.regexHost,
        limitLines,
      });
    }
    // NIC serves `spec.defaultBackend` at `/` when no rule path is `/` (upstream named with an empty
    // host); a master's and a minion's are dropped, as NIC drops them.
    if (role === 'plain' && ing.defaultBackend && !seen.has('prefix /')) {
      locations.push({
        match: 'prefix',
        path: '/',
        owner: `${namespace}/${name}`,
        comments,
        snippets,
        snippetsField,
        ...routed,
        upstream: upstreamFor('', ing.defaultBackend),
        limitLines,
      });
    }
    const tlsEntry = ing.tls.find((t) => t.hosts.includes(rule.host));
    servers.push({
      host: rule.host,
      tls: tlsEntry !== undefined,
      tlsSecret: tlsEntry?.secretName ?? null,
      sslRedirect:
        values.ingressNginxSslRedirect !== undefined
          ? values.ingressNginxSslRedirect
            ? 308
            : null
          : (values.sslRedirect ?? true)
            ? 301
            : null,
      serverSnippets: role === 'minion' ? [] : (values.serverSnippets ?? ctx.settings.serverSnippets),
      moreServerSnippets:
        role === 'minion' || values.serverSnippet === undefined
          ? []
          : [{ lines: values.serverSnippet, field: annotationField(ANNOTATIONS.serverSnippet.name) }],
      serverSnippetsField: values.serverSnippets
        ? annotationField(ANNOTATIONS.serverSnippets.name)
        : 'ConfigMap data[server-snippets]',
      locations,
    });
  }

  return {
    fragment: {
      key: `${namespace}/${name}`,
      ref: ing.ref,
      role,
      createdMs: createdMs(source),
      httpBlocks,
      upstreams: [...upstreams.values()],
      servers,
    },
    problems,
  };
}
