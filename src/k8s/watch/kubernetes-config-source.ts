/**
 * The Kubernetes side of a replica's configuration: informers on Ingress, Service, EndpointSlice, TLS
 * Secret and the controller's ConfigMap (and, in Gateway API mode, GatewayClass, Gateway, HTTPRoute and
 * RateLimitPolicy, whose status is written back); on every change (debounced) the objects are translated again and, when
 * the text differs, `config` is emitted with the new nginx config text. Problems become Kubernetes
 * Events and `problem` events (for the log line). The replica subscribes; nothing here reloads anything.
 */
import { EventEmitter } from 'node:events';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  NetworkingV1Api,
} from '@kubernetes/client-node';
import type { Gateway, GatewayClass, HTTPRoute, RateLimitPolicy } from '../gateway/gateway-objects.ts';
import type { StatusUpdate } from '../gateway/translate-gateway.ts';
import type { ConfigMap, EndpointSlice, Ingress, Secret, Service, TranslationProblem } from '../objects.ts';
import {
  type ClusterTranslation,
  ClusterTranslator,
  type ClusterTranslatorOptions,
} from '../translate/cluster-translator.ts';
import { EventRecorder, problemKey, problemMessage } from './event-recorder.ts';
import { GATEWAY_RESOURCES, GatewayStatusWriter } from './gateway-status-writer.ts';
import { type Backoff, DEFAULT_BACKOFF, RestartingInformer } from './restarting-informer.ts';

export interface KubernetesSourceOptions extends ClusterTranslatorOptions {
  readonly kubeConfig: KubeConfig;
  /** Watch Ingresses, Services and EndpointSlices in this namespace only; null or absent: all. */
  readonly namespace?: string | null;
  /** The ConfigMap with http-snippets and global settings; null: none. */
  readonly configMap?: { readonly namespace: string; readonly name: string } | null;
  /** Quiet time before a rebuild, so a burst of events (a rollout) gives one new config. Default 100 ms. */
  readonly debounceMs?: number;
  readonly backoff?: Backoff;
  /** Post Kubernetes Events for problems (needs `events create`). Default true. */
  readonly recordEvents?: boolean;
  readonly component?: string;
  /** Where each new problem is logged (pino-compatible); problems are also emitted as `problem`. */
  readonly logger?: ProblemLogger;
  /** Also watch GatewayClass, Gateway, HTTPRoute and RateLimitPolicy (`--gateway-api`), and write their status. */
  readonly gatewayApi?: boolean;
}

export interface ProblemLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface KubernetesSourceEvents {
  /** A new config text (only when it changed). */
  config: [text: string, translation: ClusterTranslation];
  /** A problem seen for the first time (per object version), for a log line. */
  problem: [problem: TranslationProblem];
  /** A watch stopped and is restarted after `delayMs`. */
  'watch-error': [path: string, error: unknown, delayMs: number];
}

type AnyInformer = RestartingInformer<KubernetesObject>;

export class KubernetesConfigSource extends EventEmitter<KubernetesSourceEvents> {
  private readonly translator: ClusterTranslator;
  private readonly ingresses: RestartingInformer<KubernetesObject>;
  private readonly services: RestartingInformer<KubernetesObject>;
  private readonly slices: RestartingInformer<KubernetesObject>;
  private readonly configMaps: RestartingInformer<KubernetesObject> | null;
  private readonly secrets: RestartingInformer<KubernetesObject>;
  private readonly events: EventRecorder | null;
  /** Gateway API informers by kind (only with `gatewayApi`). */
  private readonly gatewayInformers = new Map<StatusUpdate['kind'], AnyInformer>();
  private readonly statusWriter: GatewayStatusWriter | null = null;
  private seenProblems = new Set<string>();
  /** `namespace/name` → why it is not served, as last logged. */
  private seenSkips = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private replicas: number | null = null;
  private text: string | null = null;
  private last: ClusterTranslation | null = null;

  private readonly options: KubernetesSourceOptions;

  constructor(options: KubernetesSourceOptions) {
    super();
    this.options = options;
    const { kubeConfig: kc } = options;
    this.translator = new ClusterTranslator(options);
    const ns = options.namespace ?? null;
    const net = kc.makeApiClient(NetworkingV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const disc = kc.makeApiClient(DiscoveryV1Api);
    const backoff = options.backoff ?? DEFAULT_BACKOFF;
    const make = (path: string, list: () => Promise<unknown>): AnyInformer => {
      const inf = new RestartingInformer<KubernetesObject>(
        kc,
        path,
        list as ListPromise<KubernetesObject>,
        backoff,
      );
      inf.on('change', () => this.schedule());
      inf.on('restart', (err, _attempt, delayMs) => this.emit('watch-error', path, err, delayMs));
      return inf;
    };
    const scoped = (group: string, resource: string) =>
      ns === null ? `${group}/${resource}` : `${group}/namespaces/${ns}/${resource}`;
    this.ingresses = make(scoped('/apis/networking.k8s.io/v1', 'ingresses'), () =>
      ns === null ? net.listIngressForAllNamespaces() : net.listNamespacedIngress({ namespace: ns }),
    );
    this.services = make(scoped('/api/v1', 'services'), () =>
      ns === null ? core.listServiceForAllNamespaces() : core.listNamespacedService({ namespace: ns }),
    );
    this.slices = make(scoped('/apis/discovery.k8s.io/v1', 'endpointslices'), () =>
      ns === null
        ? disc.listEndpointSliceForAllNamespaces()
        : disc.listNamespacedEndpointSlice({ namespace: ns }),
    );
    // for Ingress `tls:` (the translator reads kubernetes.io/tls ones only; the informer of this
    // client version takes no field selector)
    this.secrets = make(scoped('/api/v1', 'secrets'), () =>
      ns === null ? core.listSecretForAllNamespaces() : core.listNamespacedSecret({ namespace: ns }),
    );
    const cm = options.configMap ?? null;
    this.configMaps = cm
      ? make(`/api/v1/namespaces/${cm.namespace}/configmaps`, () =>
          core.listNamespacedConfigMap({ namespace: cm.namespace }),
        )
      : null;
    this.events =
      options.recordEvents === false ? null : new EventRecorder(core, options.component ?? 'limitswitch');
    if (options.gatewayApi === true) {
      const custom = kc.makeApiClient(CustomObjectsApi);
      for (const [kind, r] of Object.entries(GATEWAY_RESOURCES) as [
        StatusUpdate['kind'],
        (typeof GATEWAY_RESOURCES)['Gateway'],
      ][]) {
        const base = `/apis/${r.group}/${r.version}`;
        const clusterScoped = kind === 'GatewayClass';
        const path = clusterScoped ? `${base}/${r.plural}` : scoped(base, r.plural);
        const list = () =>
          clusterScoped
            ? custom.listClusterCustomObject(r)
            : ns === null
              ? custom.listCustomObjectForAllNamespaces(r)
              : custom.listNamespacedCustomObject({ ...r, namespace: ns });
        this.gatewayInformers.set(kind, make(path, list));
      }
      this.statusWriter = new GatewayStatusWriter(custom, options.logger);
    }
  }

  private informers(): AnyInformer[] {
    return [
      this.ingresses,
      this.services,
      this.slices,
      this.secrets,
      ...(this.configMaps ? [this.configMaps] : []),
      ...this.gatewayInformers.values(),
    ];
  }

  /** Starts the watches; resolves once every informer has listed and the first config was emitted. */
  async start(): Promise<string> {
    for (const inf of this.informers()) inf.start();
    await Promise.all(this.informers().map((i) => i.synced));
    this.started = true;
    this.rebuild();
    return this.text!;
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all(this.informers().map((i) => i.stop()));
  }

  /** The live replica count for `nginx.org/limit-req-scale` (from the replica registry). */
  setReplicaCount(replicas: number | null): void {
    if (replicas === this.replicas) return;
    this.replicas = replicas;
    this.schedule();
  }

  /** The config text last emitted (null before `start` resolves). */
  current(): string | null {
    return this.text;
  }

  lastTranslation(): ClusterTranslation | null {
    return this.last;
  }

  private gatewayList(kind: StatusUpdate['kind']): readonly KubernetesObject[] {
    return this.gatewayInformers.get(kind)?.list() ?? [];
  }

  private schedule(): void {
    if (!this.started || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.rebuild();
    }, this.options.debounceMs ?? 100);
  }

  private rebuild(): void {
    const cmRef = this.options.configMap ?? null;
    const configMap = cmRef
      ? ((this.configMaps!.list().find(
          (c) => c.metadata?.name === cmRef.name && c.metadata?.namespace === cmRef.namespace,
        ) as ConfigMap | undefined) ?? null)
      : null;
    const t = this.translator.translate({
      ingresses: this.ingresses.list() as Ingress[],
      services: this.services.list() as Service[],
      endpointSlices: this.slices.list() as EndpointSlice[],
      configMap,
      replicas: this.replicas,
      secrets: this.secrets.list() as Secret[],
      ...(this.gatewayInformers.size > 0
        ? {
            gateway: {
              gatewayClasses: this.gatewayList('GatewayClass') as GatewayClass[],
              gateways: this.gatewayList('Gateway') as Gateway[],
              httpRoutes: this.gatewayList('HTTPRoute') as HTTPRoute[],
              rateLimitPolicies: this.gatewayList('RateLimitPolicy') as RateLimitPolicy[],
            },
          }
        : {}),
    });
    this.last = t;
    if (this.statusWriter) {
      const find = (u: StatusUpdate) =>
        this.gatewayList(u.kind).find(
          (o) =>
            o.metadata?.name === u.name && (u.namespace === null || o.metadata?.namespace === u.namespace),
        );
      void this.statusWriter.write(t.gatewayStatuses, find);
    }
    // Only problems of the current state are remembered: one that goes away and comes back is news.
    const keys = new Set(t.problems.map(problemKey));
    for (const p of t.problems) {
      if (this.seenProblems.has(problemKey(p))) continue;
      const o = p.object;
      const line = `${o.kind} ${o.namespace}/${o.name}: ${problemMessage(p)}`;
      const fields = { object: `${o.namespace}/${o.name}`, kind: o.kind, field: p.field, error: p.error };
      if (p.severity === 'error') this.options.logger?.error(fields, line);
      else this.options.logger?.warn(fields, line);
      this.emit('problem', p);
    }
    this.seenProblems = keys;
    // Ingresses of another class: said once each (until they change class), so a replica that serves
    // nothing says why.
    const skipped = new Map<string, string>();
    for (const ing of this.ingresses.list() as Ingress[]) {
      const reason = this.translator.skipReason(ing);
      if (reason === null) continue;
      const key = `${ing.metadata?.namespace ?? 'default'}/${ing.metadata?.name ?? ''}`;
      skipped.set(key, reason);
      if (this.seenSkips.get(key) !== reason) {
        this.options.logger?.info({ object: key, kind: 'Ingress' }, `Ingress ${key}: not served: ${reason}`);
      }
    }
    this.seenSkips = skipped;
    if (this.events) void this.events.record(t.problems);
    if (t.text !== this.text) {
      this.text = t.text;
      this.emit('config', t.text, t);
    }
  }
}
