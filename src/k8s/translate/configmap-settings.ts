/**
 * Global settings from the controller's ConfigMap (NIC's `nginx-config`): snippets for every level,
 * the http-level `limit_req_status`, and the real-IP settings. Like the annotation table, this table
 * generates the ConfigMap section of docs/kubernetes.md.
 */
import { hasCode } from '../../shared/errors.ts';
import type { ConfigMap, ObjectRef, TranslationProblem } from '../objects.ts';
import {
  parseBool,
  parseCidrListInOrder,
  parseHeaderName,
  parseKey,
  parseSnippet,
  parseStatusCode,
} from './annotation-values.ts';

export interface GlobalSettings {
  readonly httpSnippets: readonly string[];
  readonly serverSnippets: readonly string[];
  readonly locationSnippets: readonly string[];
  /** http-level `limit_req_status`; null leaves nginx's default (503). */
  readonly limitReqStatus: number | null;
  /** ingress-nginx's key for `limit-rps`/`limit-rpm` zones. */
  readonly limitConnZoneVariable: string;
  readonly setRealIpFrom: readonly string[];
  readonly realIpHeader: string | null;
  readonly realIpRecursive: boolean;
  /** NIC's `zone-sync`: the `limit_req_zone`s of NIC annotations are cluster-wide (`sync`). */
  readonly zoneSync: boolean;
}

export const DEFAULT_SETTINGS: GlobalSettings = {
  httpSnippets: [],
  serverSnippets: [],
  locationSnippets: [],
  limitReqStatus: null,
  limitConnZoneVariable: '$binary_remote_addr',
  setRealIpFrom: [],
  realIpHeader: null,
  realIpRecursive: false,
  zoneSync: false,
};

interface KeySpec {
  readonly key: string;
  readonly defaultValue: string;
  readonly origin: 'NIC' | 'ingress-nginx' | 'limitswitch';
  readonly doc: string;
  readonly apply: (raw: string, s: { -readonly [K in keyof GlobalSettings]: GlobalSettings[K] }) => void;
  /** Set, the key is read but does nothing here: this warning says why. */
  readonly unused?: string;
}

/** NIC's keys for zone_sync's own transport, which the store replaces. */
const ZONE_SYNC_TRANSPORT_KEYS = [
  'zone-sync-port',
  'zone-sync-domain',
  'zone-sync-resolver-addresses',
  'zone-sync-resolver-ipv6',
  'zone-sync-resolver-valid',
];

export const CONFIGMAP_KEYS: readonly KeySpec[] = [
  {
    key: 'http-snippets',
    defaultValue: '',
    origin: 'NIC',
    doc: 'Directives at the top of the `http` block: `keyval_zone`, `keyval`, `map`, `geo`, `limit_req_zone`, extra `server`s.',
    apply: (raw, s) => {
      s.httpSnippets = parseSnippet(raw);
    },
  },
  {
    key: 'server-snippets',
    defaultValue: '',
    origin: 'NIC',
    doc: 'Directives for every generated `server`; an Ingress `nginx.org/server-snippets` replaces them.',
    apply: (raw, s) => {
      s.serverSnippets = parseSnippet(raw);
    },
  },
  {
    key: 'location-snippets',
    defaultValue: '',
    origin: 'NIC',
    doc: 'Directives for every generated `location`; an Ingress `nginx.org/location-snippets` replaces them.',
    apply: (raw, s) => {
      s.locationSnippets = parseSnippet(raw);
    },
  },
  {
    key: 'limit-req-status-code',
    defaultValue: '503',
    origin: 'ingress-nginx',
    doc: "http-level `limit_req_status` (NIC has no such key; the name is ingress-nginx's). `nginx.org/limit-req-reject-code` overrides it per Ingress.",
    apply: (raw, s) => {
      s.limitReqStatus = parseStatusCode(raw);
    },
  },
  {
    key: 'limit-conn-zone-variable',
    defaultValue: '$binary_remote_addr',
    origin: 'ingress-nginx',
    doc: 'The key of the `limit-rps`/`limit-rpm` zones.',
    apply: (raw, s) => {
      s.limitConnZoneVariable = parseKey(raw);
    },
  },
  {
    key: 'set-real-ip-from',
    defaultValue: '',
    origin: 'NIC',
    doc: 'Comma-separated trusted proxy addresses/CIDRs (`set_real_ip_from` in each generated server).',
    apply: (raw, s) => {
      s.setRealIpFrom = parseCidrListInOrder(raw);
    },
  },
  {
    key: 'real-ip-header',
    defaultValue: 'X-Real-IP',
    origin: 'NIC',
    doc: '`real_ip_header` in each generated server.',
    apply: (raw, s) => {
      s.realIpHeader = parseHeaderName(raw);
    },
  },
  {
    key: 'real-ip-recursive',
    defaultValue: 'false',
    origin: 'NIC',
    doc: '`real_ip_recursive on` in each generated server.',
    apply: (raw, s) => {
      s.realIpRecursive = parseBool(raw);
    },
  },
  {
    key: 'zone-sync',
    defaultValue: 'false',
    origin: 'NIC',
    doc: "The `limit_req_zone`s of `nginx.org/limit-req-*` become cluster-wide: NIC's `<ns>/<name>_sync` zones with `sync`, one budget for all replicas (`nginx.org/limit-req-scale` is then ignored, with NIC's warning). `limitswitch.io/zone-sync` overrides it per Ingress.",
    apply: (raw, s) => {
      s.zoneSync = parseBool(raw);
    },
  },
  ...ZONE_SYNC_TRANSPORT_KEYS.map(
    (key): KeySpec => ({
      key,
      defaultValue: '',
      origin: 'NIC',
      doc: "Not used: replicas sync through the store, which plays zone_sync's part (no port, no resolver). A warning says so.",
      apply: () => {},
      unused:
        'not used: limitswitch replicas sync cluster-wide limits through the store (no zone_sync port or resolver)',
    }),
  ),
];

/**
 * Reads the ConfigMap. Unknown keys are ignored (NIC has many we do not need); invalid values are
 * `error` problems and the caller keeps the last good settings.
 */
export function readConfigMap(
  cm: ConfigMap | null,
  object: ObjectRef | null,
): { settings: GlobalSettings; problems: TranslationProblem[] } {
  const settings = { ...DEFAULT_SETTINGS };
  const problems: TranslationProblem[] = [];
  if (!cm?.data) return { settings, problems };
  for (const spec of CONFIGMAP_KEYS) {
    const raw = cm.data[spec.key];
    if (raw === undefined || raw === null) continue;
    if (spec.unused !== undefined) {
      if (object)
        problems.push({ object, field: `data[${spec.key}]`, error: spec.unused, severity: 'warning' });
      continue;
    }
    try {
      spec.apply(String(raw), settings);
    } catch (err) {
      if (!hasCode(err, 'RL_ERR_ANNOTATION_INVALID')) throw err;
      if (object)
        problems.push({ object, field: `data[${spec.key}]`, error: err.message, severity: 'error' });
    }
  }
  return { settings, problems };
}

export function renderConfigMapTable(): string {
  const rows = ['| key | default | from | description |', '| --- | --- | --- | --- |'];
  for (const k of CONFIGMAP_KEYS) {
    const dflt = k.defaultValue === '' ? '—' : `\`${k.defaultValue}\``;
    rows.push(`| \`${k.key}\` | ${dflt} | ${k.origin} | ${k.doc.replaceAll('|', '\\|')} |`);
  }
  return rows.join('\n');
}
