/**
 * Kubernetes objects → one nginx config text, one Ingress at a time: each Ingress is translated and
 * its fragment checked alone (ConfigMap settings + that Ingress) before it joins the whole. A bad
 * annotation or snippet rejects only that Ingress; its last good version stays in the config and the
 * problem is reported for an Event and a log line. Stateful only in what it remembers as last good.
 */

import { createHash } from 'node:crypto';
import { ConfigError, loadConfigText } from '../../config/index.ts';
import { type GatewayObjects, NO_GATEWAY_OBJECTS } from '../gateway/gateway-objects.ts';
import { type StatusUpdate, translateGateways } from '../gateway/translate-gateway.ts';
import type {
  ConfigMap,
  EndpointSlice,
  Ingress,
  KubeObject,
  ObjectRef,
  Secret,
  Service,
  TranslationProblem,
} from '../objects.ts';
import { keyOf, refOf } from '../objects.ts';
import { buildBackendIndex } from './backends.ts';
import { type GlobalSettings, readConfigMap } from './configmap-settings.ts';
import type { IngressFragment } from './fragment.ts';
import { ingressClassOf, normalizeIngress } from './ingress-normalize.ts';
import { renderConfig } from './render-config.ts';
import { NO_SECRETS, TlsSecretStore, type TlsSecretView } from './tls-secrets.ts';
import { type IngressContext, roleOf, translateIngress } from './translate-ingress.ts';

export interface ClusterObjects {
  readonly ingresses: readonly Ingress[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly configMap: ConfigMap | null;
  /** Live replicas, for `nginx.org/limit-req-scale`; null or absent: no scaling. */
  readonly replicas?: number | null;
  /** The Secrets that Ingresses' `tls:` (and Gateway listeners) may name. */
  readonly secrets?: readonly Secret[];
  /** Gateway API mode: GatewayClasses, Gateways, HTTPRoutes and RateLimitPolicies. */
  readonly gateway?: GatewayObjects;
}

/**
 * Loads config text and throws when it is not valid. A thrown `ConfigError` (with `text` and `line`)
 * lets the problem name the annotation or ConfigMap key the bad line came from.
 */
export type ConfigCheck = (text: string, sourceName: string, files: TlsSecretView['read']) => void;

const loadCheck: ConfigCheck = (text, sourceName, files) => {
  loadConfigText(text, sourceName, { files });
};

interface CheckFailure {
  readonly error: string;
  readonly line: number;
}

export interface ClusterTranslatorOptions {
  /** Only Ingresses of this class; undefined or null: every Ingress (as `render` does). */
  readonly ingressClass?: string | null;
  /** With `ingressClass`, also take Ingresses that name no class (NIC's `-watch-ingress-without-class`). */
  readonly watchIngressWithoutClass?: boolean;
  readonly listenPort?: number;
  /** The port TLS hosts are served on (default 443). */
  readonly tlsListenPort?: number;
  /** The config parser (default: `loadConfigText`); null: only the translator's own checks. */
  readonly checkConfig?: ConfigCheck | null;
}

export interface ClusterTranslation {
  readonly text: string;
  readonly problems: readonly TranslationProblem[];
  /** `namespace/name` of the Ingresses in the text, and whether it is their current version. */
  readonly ingresses: ReadonlyMap<string, 'current' | 'last-good'>;
  /** The files the text names that come from Secrets (give them to the config loader). */
  readonly files: TlsSecretView['read'];
  /** The status each Gateway API object should carry (empty without Gateway API objects). */
  readonly gatewayStatuses: readonly StatusUpdate[];
}

const CHECK_CACHE_LIMIT = 512;

function identity(obj: KubeObject): string {
  return obj.metadata?.uid ?? keyOf(obj);
}

export class ClusterTranslator {
  private readonly lastGoodIngress = new Map<string, Ingress>();
  private lastGoodConfigMap: ConfigMap | null = null;
  private lastGoodText: string | null = null;
  /** Text digest → parser failure (null when valid); fragments rarely change, so most checks are hits. */
  private readonly checked = new Map<string, CheckFailure | null>();
  private readonly secretStore = new TlsSecretStore();
  /** The Secrets of the snapshot being translated. */
  private secrets: TlsSecretView = NO_SECRETS;

  private readonly options: ClusterTranslatorOptions;

  constructor(options: ClusterTranslatorOptions = {}) {
    this.options = options;
  }

  private check(text: string, sourceName: string): CheckFailure | null {
    const check = this.options.checkConfig === undefined ? loadCheck : this.options.checkConfig;
    if (!check) return null;
    // Keyed by a digest: the whole config can be large and the cache holds many entries.
    const key = createHash('sha256').update(text).digest('base64');
    const hit = this.checked.get(key);
    if (hit !== undefined) return hit;
    let error: CheckFailure | null = null;
    try {
      check(text, sourceName, this.secrets.read);
    } catch (err) {
      error =
        err instanceof ConfigError
          ? { error: err.text, line: err.line }
          : { error: err instanceof Error ? err.message : String(err), line: 0 };
    }
    if (this.checked.size >= CHECK_CACHE_LIMIT) this.checked.delete(this.checked.keys().next().value!);
    this.checked.set(key, error);
    return error;
  }

  /** Whether the Ingress belongs to this replica set's class. */
  accepts(ing: Ingress): boolean {
    return this.skipReason(ing) === null;
  }

  /** Why an Ingress of another class (or of none) is not served; null when it is. */
  skipReason(ing: Ingress): string | null {
    const wanted = this.options.ingressClass;
    if (wanted === undefined || wanted === null) return null;
    const cls = ingressClassOf(ing);
    if (cls === null) {
      return this.options.watchIngressWithoutClass === true
        ? null
        : `it names no IngressClass and --ingress-class is "${wanted}"; --watch-ingress-without-class serves it`;
    }
    return cls === wanted ? null : `its class is "${cls}", not "${wanted}" (--ingress-class)`;
  }

  private settingsFor(cm: ConfigMap | null, problems: TranslationProblem[]): GlobalSettings {
    const ref = cm ? refOf(cm, 'ConfigMap', 'v1') : null;
    const current = readConfigMap(cm, ref);
    let error = current.problems[0];
    if (!error && ref) {
      // A probe server and location carry the global server/location snippets, so they are checked too.
      const probe = renderConfig(
        current.settings,
        [probeFragment(current.settings, ref)],
        this.renderOpts(cm),
      );
      const failure = this.check(probe.text, `configmap:${keyOf(cm!)}`);
      if (failure) {
        const field = probe.originOf(failure.line) ?? 'data';
        error = { object: ref, field, error: failure.error, severity: 'error' };
      }
    }
    if (!error) {
      this.lastGoodConfigMap = cm;
      return current.settings;
    }
    const fallback = this.lastGoodConfigMap;
    const kept = fallback !== null && fallback !== cm;
    for (const p of current.problems.length > 0 ? current.problems : [error])
      problems.push({ ...p, keptLastGood: kept });
    return kept ? readConfigMap(fallback, null).settings : readConfigMap(null, null).settings;
  }

  private renderOpts(cm: ConfigMap | null) {
    return {
      configMap: cm ? refOf(cm, 'ConfigMap', 'v1') : null,
      secrets: this.secrets,
      ...(this.options.listenPort !== undefined ? { listenPort: this.options.listenPort } : {}),
      ...(this.options.tlsListenPort !== undefined ? { tlsListenPort: this.options.tlsListenPort } : {}),
    };
  }

  /** Translates one version of an Ingress and checks its fragment alone. */
  private attempt(ing: Ingress, ctx: IngressContext, settings: GlobalSettings, cm: ConfigMap | null) {
    const { ingress, problems } = normalizeIngress(ing);
    if (problems.some((p) => p.severity === 'error')) return { fragment: null, problems };
    const t = translateIngress(ingress, ing, ctx);
    const all = [...problems, ...t.problems];
    if (!t.fragment) return { fragment: null, problems: all };
    const alone = renderConfig(settings, [t.fragment], { ...this.renderOpts(cm), standaloneMinions: true });
    const failure = this.check(alone.text, `ingress:${keyOf(ing)}`);
    if (failure) {
      const field = alone.originOf(failure.line) ?? 'metadata.annotations';
      all.push({ object: ingress.ref, field, error: failure.error, severity: 'error' });
      return { fragment: null, problems: all };
    }
    return { fragment: t.fragment, problems: all };
  }

  translate(objects: ClusterObjects): ClusterTranslation {
    const problems: TranslationProblem[] = [];
    const cm = objects.configMap;
    this.secrets = this.secretStore.resolve(objects.secrets ?? [], problems);
    const files = this.secrets.read;
    const settings = this.settingsFor(cm, problems);
    const backends = buildBackendIndex(objects.services, objects.endpointSlices);
    const replicas = objects.replicas ?? null;
    const mine = objects.ingresses.filter((i) => this.accepts(i));
    const present = new Set(mine.map(identity));
    for (const id of this.lastGoodIngress.keys()) if (!present.has(id)) this.lastGoodIngress.delete(id);

    const chosen: IngressFragment[] = [];
    const chosenSource = new Map<string, Ingress>();
    const status = new Map<string, 'current' | 'last-good'>();
    const run = (ing: Ingress, ctx: IngressContext) => {
      const now = this.attempt(ing, ctx, settings, cm);
      if (now.fragment) {
        this.lastGoodIngress.set(identity(ing), ing);
        problems.push(...now.problems);
        chosen.push(now.fragment);
        chosenSource.set(now.fragment.key, ing);
        status.set(now.fragment.key, 'current');
        return;
      }
      const good = this.lastGoodIngress.get(identity(ing));
      const old = good && good !== ing ? this.attempt(good, ctx, settings, cm) : null;
      for (const p of now.problems)
        problems.push(p.severity === 'error' ? { ...p, keptLastGood: !!old?.fragment } : p);
      if (old?.fragment) {
        chosen.push(old.fragment);
        chosenSource.set(old.fragment.key, good!);
        status.set(old.fragment.key, 'last-good');
      }
    };

    const roleOfIngress = (i: Ingress) => roleOf(i.metadata?.annotations ?? {});
    for (const ing of mine.filter((i) => roleOfIngress(i) !== 'minion'))
      run(ing, { settings, backends, replicas });
    for (const ing of mine.filter((i) => roleOfIngress(i) === 'minion')) {
      const host = ing.spec?.rules?.[0]?.host ?? '';
      const master = chosen
        .filter((f) => f.role === 'master' && f.servers[0]?.host === host)
        .sort((a, b) => a.createdMs - b.createdMs)[0];
      const masterAnnotations = master ? chosenSource.get(master.key)?.metadata?.annotations : undefined;
      run(ing, { settings, backends, replicas, ...(masterAnnotations ? { masterAnnotations } : {}) });
    }

    const gw = translateGateways(objects.gateway ?? NO_GATEWAY_OBJECTS, {
      backends,
      secrets: this.secrets,
      probe: (fragments, httpBlocks) => {
        const alone = renderConfig(settings, fragments, { ...this.renderOpts(cm), httpBlocks });
        return this.check(alone.text, 'gateway-api')?.error ?? null;
      },
    });
    problems.push(...gw.problems);
    const gatewayStatuses = gw.statuses;
    const whole = renderConfig(settings, [...chosen, ...gw.fragments], {
      ...this.renderOpts(cm),
      httpBlocks: gw.httpBlocks,
    });
    problems.push(...whole.problems);
    const failure = this.check(whole.text, 'kubernetes');
    if (failure) {
      const parseError = failure.error;
      // Each fragment passed alone, so only an interaction between objects gets here.
      const object = cm
        ? refOf(cm, 'ConfigMap', 'v1')
        : { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', namespace: '', name: '' };
      const kept = this.lastGoodText !== null;
      problems.push({
        object,
        field: '',
        error: `the combined config is invalid: ${parseError}`,
        severity: 'error',
        keptLastGood: kept,
      });
      if (kept) return { text: this.lastGoodText!, problems, ingresses: status, files, gatewayStatuses };
      return { text: whole.text, problems, ingresses: status, files, gatewayStatuses };
    }
    this.lastGoodText = whole.text;
    return { text: whole.text, problems, ingresses: status, files, gatewayStatuses };
  }
}

/** A stand-in Ingress that carries the ConfigMap's server and location snippets through the check. */
function probeFragment(settings: GlobalSettings, ref: ObjectRef): IngressFragment {
  return {
    key: 'configmap-probe',
    ref,
    role: 'plain',
    createdMs: 0,
    httpBlocks: [],
    upstreams: [{ name: 'configmap-probe', servers: ['127.0.0.1:8181'], note: null }],
    servers: [
      {
        host: 'configmap-probe.invalid',
        tls: false,
        tlsSecret: null,
        sslRedirect: null,
        serverSnippets: settings.serverSnippets,
        serverSnippetsField: 'data[server-snippets]',
        locations: [
          {
            match: 'prefix',
            path: '/',
            owner: '',
            comments: [],
            snippets: settings.locationSnippets,
            snippetsField: 'data[location-snippets]',
            upstream: 'configmap-probe',
            limitLines: [],
          },
        ],
      },
    ],
  };
}
