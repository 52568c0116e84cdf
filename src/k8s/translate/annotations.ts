/**
 * The one table of the Ingress annotations we read: name, where it applies, how it is validated,
 * whether a minion inherits it from its master, its default, and its documentation. The annotation
 * table in docs/kubernetes.md is generated from it (a test keeps the two in step).
 */

import type { LogLevel } from '../../engine/log-line.ts';
import { hasCode } from '../../shared/errors.ts';
import type { ObjectRef, TranslationProblem } from '../objects.ts';
import {
  invalidValueError,
  parseBool,
  parseCidrList,
  parseCount,
  parseHttpCode,
  parseKey,
  parseLogLevel,
  parseMultiplier,
  parsePathRegex,
  parsePathWithCaptures,
  parseRate,
  parseRedirectUrl,
  parseRequestCount,
  parseRewriteList,
  parseSnippet,
  parseStatusCode,
  parseZoneSize,
  type Rate,
} from './annotation-values.ts';

/** `ingress`: every location of the Ingress; `server`: the `server` block; `location`: each path's block. */
export type AnnotationScope = 'ingress' | 'server' | 'location';

export interface AnnotationSpec<T> {
  readonly name: string;
  readonly scope: AnnotationScope;
  /** False when NIC ignores it on a minion (server-level settings belong to the master). */
  readonly onMinion: boolean;
  /** A minion without its own value takes the master's. */
  readonly inherited: boolean;
  /** As documented; empty when unset means off. */
  readonly defaultValue: string;
  readonly doc: string;
  readonly parse: (raw: string) => T;
}

function spec<T>(s: AnnotationSpec<T>): AnnotationSpec<T> {
  return s;
}

export type MergeableType = 'master' | 'minion';

function parseMergeableType(raw: string): MergeableType {
  const text = raw.trim();
  if (text === 'master' || text === 'minion') return text;
  throw invalidValueError(`invalid value "${raw}": must be master or minion`);
}

function parseClassName(raw: string): string {
  const text = raw.trim();
  if (text === '') throw invalidValueError(`invalid value "${raw}": must not be empty`);
  return text;
}

const NIC = 'nginx.org/';
const ING = 'nginx.ingress.kubernetes.io/';

export const ANNOTATIONS = {
  ingressClass: spec<string>({
    name: 'kubernetes.io/ingress.class',
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'Legacy class selector; `spec.ingressClassName` wins when both are set.',
    parse: parseClassName,
  }),
  mergeableType: spec<MergeableType>({
    name: `${NIC}mergeable-ingress-type`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: '`master` owns a host (TLS, server settings, no paths); each `minion` adds paths to it. Oldest minion wins a duplicate path.',
    parse: parseMergeableType,
  }),
  sslRedirect: spec<boolean>({
    name: 'ingress.kubernetes.io/ssl-redirect',
    scope: 'server',
    onMinion: false,
    inherited: false,
    defaultValue: 'true',
    doc: 'NIC: for a host in `spec.tls`, plain HTTP gets `301` to `https://$host$request_uri` (a server on the HTTP port of its own); `false`: the host is served on both ports.',
    parse: parseBool,
  }),
  ingressNginxSslRedirect: spec<boolean>({
    name: `${ING}ssl-redirect`,
    scope: 'server',
    onMinion: false,
    inherited: false,
    defaultValue: 'true',
    doc: "ingress-nginx: as NIC's `ssl-redirect`, with `308`; when set, it wins over NIC's.",
    parse: parseBool,
  }),
  serverSnippets: spec<string[]>({
    name: `${NIC}server-snippets`,
    scope: 'server',
    onMinion: false,
    inherited: false,
    defaultValue: 'ConfigMap `server-snippets`',
    doc: 'nginx directives added to the `server` block. Ignored (with a warning) on a minion.',
    parse: parseSnippet,
  }),
  locationSnippets: spec<string[]>({
    name: `${NIC}location-snippets`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: 'ConfigMap `location-snippets`',
    doc: "nginx directives added to each of the Ingress's locations (a minion's apply to its own paths only).",
    parse: parseSnippet,
  }),
  limitReqRate: spec<Rate>({
    name: `${NIC}limit-req-rate`,
    scope: 'ingress',
    onMinion: true,
    inherited: true,
    defaultValue: '',
    doc: 'Turns limiting on for every location of the Ingress: `Nr/s` or `Nr/m`. One zone per Ingress, named `<namespace>/<name>`.',
    parse: parseRate,
  }),
  limitReqKey: spec<string>({
    name: `${NIC}limit-req-key`,
    scope: 'ingress',
    onMinion: true,
    inherited: true,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an nginx variable, not a template
    defaultValue: '${binary_remote_addr}',
    doc: 'The zone key: text and nginx variables.',
    parse: parseKey,
  }),
  limitReqZoneSize: spec<string>({
    name: `${NIC}limit-req-zone-size`,
    scope: 'ingress',
    onMinion: true,
    inherited: true,
    defaultValue: '10m',
    doc: 'The zone size (`k`, `m`; at least 32k).',
    parse: parseZoneSize,
  }),
  limitReqBurst: spec<number>({
    name: `${NIC}limit-req-burst`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: '0',
    doc: '`burst=`: excess requests queued (or allowed with `no-delay`).',
    parse: parseCount,
  }),
  limitReqDelay: spec<number>({
    name: `${NIC}limit-req-delay`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: '0',
    doc: '`delay=`: excess requests passed without delay before delaying starts (two-stage limiting).',
    parse: parseCount,
  }),
  limitReqNoDelay: spec<boolean>({
    name: `${NIC}limit-req-no-delay`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: 'false',
    doc: '`nodelay`; takes precedence over `limit-req-delay`.',
    parse: parseBool,
  }),
  limitReqRejectCode: spec<number>({
    name: `${NIC}limit-req-reject-code`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: '429',
    doc: '`limit_req_status` for rejected requests (400–599).',
    parse: parseStatusCode,
  }),
  limitReqDryRun: spec<boolean>({
    name: `${NIC}limit-req-dry-run`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: 'false',
    doc: '`limit_req_dry_run on`: count excess requests without limiting them.',
    parse: parseBool,
  }),
  limitReqLogLevel: spec<LogLevel>({
    name: `${NIC}limit-req-log-level`,
    scope: 'location',
    onMinion: true,
    inherited: true,
    defaultValue: 'error',
    doc: '`limit_req_log_level`: info, notice, warn or error.',
    parse: parseLogLevel,
  }),
  limitReqScale: spec<boolean>({
    name: `${NIC}limit-req-scale`,
    scope: 'ingress',
    onMinion: true,
    inherited: true,
    defaultValue: 'false',
    doc: 'Divide the rate by the number of live replicas (rounded down; below 1r/s it switches to r/m). Updated as replicas come and go.',
    parse: parseBool,
  }),
  zoneSync: spec<boolean>({
    name: 'limitswitch.io/zone-sync',
    scope: 'ingress',
    onMinion: true,
    inherited: true,
    defaultValue: '',
    doc: "limitswitch: this Ingress's `limit_req_zone`s cluster-wide (`sync`) or not, whatever the ConfigMap's `zone-sync` says; NIC's zones are then named `<ns>/<name>_sync`, ingress-nginx's keep their names. NIC has no per-Ingress way.",
    parse: parseBool,
  }),
  limitRps: spec<number>({
    name: `${ING}limit-rps`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '0',
    doc: 'ingress-nginx: requests per second per client address; burst = rps × multiplier, `nodelay`. Zone `<ns>_<name>_<uid>_rps`, 5m.',
    parse: parseRequestCount,
  }),
  limitRpm: spec<number>({
    name: `${ING}limit-rpm`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '0',
    doc: 'ingress-nginx: requests per minute per client address; applied before `limit-rps`. Zone `<ns>_<name>_<uid>_rpm`, 5m.',
    parse: parseRequestCount,
  }),
  limitBurstMultiplier: spec<number>({
    name: `${ING}limit-burst-multiplier`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '5',
    doc: 'ingress-nginx: burst as a multiple of `limit-rps`/`limit-rpm`.',
    parse: parseMultiplier,
  }),
  limitAllowlist: spec<string[]>({
    name: `${ING}limit-allowlist`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: comma-separated addresses/CIDRs exempt from `limit-rps`/`limit-rpm` (a `geo` that yields an empty key).',
    parse: parseCidrList,
  }),
  limitWhitelist: spec<string[]>({
    name: `${ING}limit-whitelist`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: older name of `limit-allowlist` (used when `limit-allowlist` is absent).',
    parse: parseCidrList,
  }),
  useRegex: spec<boolean>({
    name: `${ING}use-regex`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: 'false',
    doc: 'ingress-nginx: the paths are regular expressions. As ingress-nginx renders it, every location of the host (of any Ingress) then becomes `location ~* "^<path>"`, longest path first.',
    parse: parseBool,
  }),
  rewriteTarget: spec<string>({
    name: `${ING}rewrite-target`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: `rewrite "(?i)<path>" <target> break;` before `proxy_pass` (captures `$1`…); as `use-regex`, it makes the host\'s locations regular expressions.',
    parse: parsePathWithCaptures,
  }),
  appRoot: spec<string>({
    name: `${ING}app-root`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: `/` of the host answers `302` to `$scheme://$http_host<app-root>` (a server-level `if ($uri = /)`).',
    parse: parsePathWithCaptures,
  }),
  permanentRedirect: spec<string>({
    name: `${ING}permanent-redirect`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: each location answers `return 301 <url>` (or `permanent-redirect-code`, 300–308) instead of proxying.',
    parse: parseRedirectUrl,
  }),
  permanentRedirectCode: spec<number>({
    name: `${ING}permanent-redirect-code`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: '301',
    doc: 'ingress-nginx: the code of `permanent-redirect`; outside 300–308 it is 301, as ingress-nginx reads it.',
    parse: parseHttpCode,
  }),
  temporalRedirect: spec<string>({
    name: `${ING}temporal-redirect`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: each location answers `return 302 <url>` (or `temporal-redirect-code`, 300–307); wins over `permanent-redirect`.',
    parse: parseRedirectUrl,
  }),
  temporalRedirectCode: spec<number>({
    name: `${ING}temporal-redirect-code`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: '302',
    doc: 'ingress-nginx: the code of `temporal-redirect`; outside 300–307 it is 302.',
    parse: parseHttpCode,
  }),
  forceSslRedirect: spec<boolean>({
    name: `${ING}force-ssl-redirect`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: 'false',
    doc: 'ingress-nginx: plain HTTP to these locations gets `308` to `https://$host$request_uri`, with or without TLS for the host.',
    parse: parseBool,
  }),
  configurationSnippet: spec<string[]>({
    name: `${ING}configuration-snippet`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: "ingress-nginx: nginx directives added to each of the Ingress's locations (after `nginx.org/location-snippets`), checked as the rest of the config is.",
    parse: parseSnippet,
  }),
  serverSnippet: spec<string[]>({
    name: `${ING}server-snippet`,
    scope: 'server',
    onMinion: false,
    inherited: false,
    defaultValue: '',
    doc: 'ingress-nginx: nginx directives added to the `server` block (after `nginx.org/server-snippets`).',
    parse: parseSnippet,
  }),
  rewrites: spec<ReadonlyMap<string, string>>({
    name: `${NIC}rewrites`,
    scope: 'location',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'NIC: `serviceName=<svc> rewrite=<path>;…`: the locations of that Service pass `proxy_pass http://<upstream><path>`, so nginx replaces the matched prefix with `<path>`.',
    parse: parseRewriteList,
  }),
  pathRegex: spec<'case_sensitive' | 'case_insensitive' | 'exact'>({
    name: `${NIC}path-regex`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'NIC: the paths are `case_sensitive` (`location ~ "^<path>"`), `case_insensitive` (`~*`) regular expressions, or `exact` (`= "<path>"`).',
    parse: parsePathRegex,
  }),
  nicRewriteTarget: spec<string>({
    name: `${NIC}rewrite-target`,
    scope: 'ingress',
    onMinion: true,
    inherited: false,
    defaultValue: '',
    doc: 'NIC: `rewrite <pattern> <target> break;` before `proxy_pass`, the pattern matching as the location does (`^<path>`, `(?i)^<path>`, or the path); `nginx.org/rewrites` wins over it.',
    parse: parsePathWithCaptures,
  }),
  redirectToHttps: spec<boolean>({
    name: `${NIC}redirect-to-https`,
    scope: 'server',
    onMinion: false,
    inherited: false,
    defaultValue: 'false',
    doc: 'NIC: a request whose `X-Forwarded-Proto` is `http` gets `301` to `https://$host$request_uri` (behind a TLS-terminating load balancer).',
    parse: parseBool,
  }),
} as const;

export type AnnotationId = keyof typeof ANNOTATIONS;
type ParsedOf<K extends AnnotationId> = ReturnType<(typeof ANNOTATIONS)[K]['parse']>;
export type AnnotationValues = { -readonly [K in AnnotationId]?: ParsedOf<K> };

export const ANNOTATION_IDS = Object.keys(ANNOTATIONS) as AnnotationId[];

/**
 * The annotation families whose members we judge: a name under one of these prefixes is meant for an
 * ingress controller, so one the table does not hold is named as not carried over (by `render` and
 * `migrate`) rather than passed by in silence. Other annotations (`kubectl.kubernetes.io/…`) are not ours.
 */
export const ANNOTATION_PREFIXES: readonly string[] = [
  'nginx.org/',
  'nginx.ingress.kubernetes.io/',
  'limitswitch.io/',
  'ingress.kubernetes.io/',
];

const READ = new Set<string>(ANNOTATION_IDS.map((id) => ANNOTATIONS[id].name));

/** The annotations of those families that the table does not hold (nothing reads them), sorted. */
export function unreadAnnotations(
  annotations: Readonly<Record<string, string>> | null | undefined,
): string[] {
  return Object.keys(annotations ?? {})
    .filter((name) => ANNOTATION_PREFIXES.some((p) => name.startsWith(p)) && !READ.has(name))
    .sort();
}

/** The raw annotation field path used in problems and Events. */
export function annotationField(name: string): string {
  return `metadata.annotations[${name}]`;
}

/**
 * Parses every known annotation present. Invalid values become `error` problems (the caller rejects
 * the Ingress); the valid ones are returned either way so a report can name every bad field at once.
 */
export function readAnnotations(
  annotations: Readonly<Record<string, string>> | null | undefined,
  object: ObjectRef,
): { values: AnnotationValues; problems: TranslationProblem[] } {
  const values: AnnotationValues = {};
  const problems: TranslationProblem[] = [];
  for (const id of ANNOTATION_IDS) {
    const def = ANNOTATIONS[id];
    const raw = annotations?.[def.name];
    if (raw === undefined || raw === null) continue;
    try {
      (values as Record<string, unknown>)[id] = def.parse(String(raw));
    } catch (err) {
      if (!hasCode(err, 'RL_ERR_ANNOTATION_INVALID')) throw err;
      problems.push({ object, field: annotationField(def.name), error: err.message, severity: 'error' });
    }
  }
  return { values, problems };
}

/** The raw annotations a minion ends up with: its own, plus the master's inheritable ones it lacks. */
export function inheritFromMaster(
  minion: Readonly<Record<string, string>>,
  master: Readonly<Record<string, string>>,
): Record<string, string> {
  const merged: Record<string, string> = { ...minion };
  for (const id of ANNOTATION_IDS) {
    const def = ANNOTATIONS[id];
    if (def.inherited && merged[def.name] === undefined && master[def.name] !== undefined) {
      merged[def.name] = master[def.name]!;
    }
  }
  return merged;
}

/** Markdown table for docs/kubernetes.md. */
export function renderAnnotationTable(): string {
  const rows = ['| annotation | scope | default | minion | description |', '| --- | --- | --- | --- | --- |'];
  for (const id of ANNOTATION_IDS) {
    const d = ANNOTATIONS[id];
    const minion = !d.onMinion ? 'ignored' : d.inherited ? 'inherits from master' : 'own value';
    const dflt =
      d.defaultValue === '' ? '—' : d.defaultValue.includes('`') ? d.defaultValue : `\`${d.defaultValue}\``;
    rows.push(`| \`${d.name}\` | ${d.scope} | ${dflt} | ${minion} | ${d.doc.replaceAll('|', '\\|')} |`);
  }
  return rows.join('\n');
}
