/**
 * A small Kubernetes API server for watch tests, speaking the real list/watch wire protocol over HTTP:
 * lists carry the collection's `resourceVersion`; `?watch=true&resourceVersion=N` streams every event
 * after N as chunked NDJSON (`{"type":"ADDED","object":{…}}`), then live ones; BOOKMARK events on
 * demand; a resourceVersion older than the compaction point answers a 410 `ERROR` event (or an HTTP 410);
 * connections can be dropped mid-stream; the server can refuse requests with 503 while "starting";
 * Events POSTed to `/api/v1/namespaces/NS/events` are recorded.
 */
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface Resource {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly kind: string;
}

const RESOURCES: Record<string, Resource> = {
  configmaps: { group: '', version: 'v1', kind: 'ConfigMap' },
  secrets: { group: '', version: 'v1', kind: 'Secret' },
  services: { group: '', version: 'v1', kind: 'Service' },
  endpointslices: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' },
  ingresses: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
  gatewayclasses: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'GatewayClass' },
  gateways: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
  httproutes: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute' },
  ratelimitpolicies: { group: 'gateway.nginx.org', version: 'v1alpha1', kind: 'RateLimitPolicy' },
};

/** Cluster-scoped kinds live under the empty namespace. */
const CLUSTER_SCOPED = new Set(['gatewayclasses']);

const KIND_TO_RESOURCE = Object.fromEntries(Object.entries(RESOURCES).map(([r, d]) => [d.kind, r]));

type Obj = { kind?: string; apiVersion?: string; metadata?: Record<string, unknown> } & Record<
  string,
  unknown
>;

interface StoredEvent {
  readonly rv: number;
  readonly resource: string;
  readonly namespace: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Obj;
}

interface Watcher {
  readonly resource: string;
  readonly namespace: string | null;
  readonly res: ServerResponse;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
}

export class FakeKubeApiServer extends EventEmitter {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly objects = new Map<string, Map<string, Obj>>(); // resource → ns/name → object
  private readonly history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private rv = 100;
  private compactedRv = 0;
  private unavailable = false;
  private held: (() => void)[] | null = null;
  private uidSeq = 0;
  /** Answer a too-old watch with HTTP 410 instead of a 200 stream holding one 410 ERROR event. */
  goneAsHttpStatus = false;
  /** Delay before answering a list, as a slow API server would. */
  listDelayMs = 0;
  readonly requests: RecordedRequest[] = [];
  readonly postedEvents: Obj[] = [];
  /** Status subresource writes, in order. */
  readonly statusWrites: { resource: string; namespace: string; name: string; status: unknown }[] = [];

  private constructor() {
    super();
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  static async start(): Promise<FakeKubeApiServer> {
    const fake = new FakeKubeApiServer();
    fake.server.listen(0, '127.0.0.1');
    await once(fake.server, 'listening');
    return fake;
  }

  get url(): string {
    const a = this.server.address();
    return typeof a === 'object' && a ? `http://127.0.0.1:${a.port}` : '';
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** Open watch streams, per resource (for tests that wait until a client is watching). */
  watchCount(resource?: string): number {
    return [...this.watchers].filter((w) => resource === undefined || w.resource === resource).length;
  }

  /**
   * Creates or replaces an object (by kind, namespace, name) and emits ADDED or MODIFIED. As with
   * `kubectl apply`, the status is the server's: an existing one is kept, and `metadata.generation`
   * counts changes of everything else.
   */
  apply(obj: object): Obj {
    const input = obj as Obj;
    const resource = KIND_TO_RESOURCE[input.kind ?? ''];
    if (!resource) throw new Error(`fake API server: unknown kind ${input.kind}`);
    const meta = { ...(input.metadata ?? {}) } as Record<string, unknown>;
    const ns = CLUSTER_SCOPED.has(resource) ? '' : String(meta.namespace ?? 'default');
    const key = `${ns}/${String(meta.name)}`;
    const bucket = this.objects.get(resource) ?? new Map<string, Obj>();
    this.objects.set(resource, bucket);
    const existing = bucket.get(key);
    this.rv++;
    const { status: _ignored, ...spec } = input;
    const changed = !existing || JSON.stringify(specOf(existing)) !== JSON.stringify(specOf(spec));
    const generation = Number(existing?.metadata?.generation ?? 0) + (changed ? 1 : 0);
    const object: Obj = {
      ...spec,
      ...(existing?.status !== undefined ? { status: existing.status } : {}),
      metadata: {
        ...meta,
        ...(ns === '' ? {} : { namespace: ns }),
        generation,
        uid: existing?.metadata?.uid ?? meta.uid ?? `fake-uid-${++this.uidSeq}`,
        creationTimestamp:
          existing?.metadata?.creationTimestamp ?? meta.creationTimestamp ?? new Date().toISOString(),
        resourceVersion: String(this.rv),
      },
    };
    bucket.set(key, object);
    this.publish({ rv: this.rv, resource, namespace: ns, type: existing ? 'MODIFIED' : 'ADDED', object });
    return object;
  }

  /** Deletes an object and emits DELETED (with a new resourceVersion, as the API server does). */
  remove(kind: string, namespace: string, name: string): void {
    const resource = KIND_TO_RESOURCE[kind]!;
    const bucket = this.objects.get(resource);
    const existing = bucket?.get(`${namespace}/${name}`);
    if (!existing) throw new Error(`fake API server: no ${kind} ${namespace}/${name}`);
    bucket!.delete(`${namespace}/${name}`);
    this.rv++;
    const object = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(this.rv) } };
    this.publish({ rv: this.rv, resource, namespace, type: 'DELETED', object });
  }

  /** Forgets history up to now: a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history.length = 0;
  }

  /** Sends a BOOKMARK with the current resourceVersion on every open watch. */
  bookmark(): void {
    for (const w of this.watchers) {
      const { group, version, kind } = RESOURCES[w.resource]!;
      const apiVersion = group ? `${group}/${version}` : version;
      w.res.write(
        `${JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion, metadata: { resourceVersion: String(this.rv) } } })}\n`,
      );
    }
  }

  /** Sends the mid-stream 410 a real server sends when a watcher falls behind compaction, then ends the streams. */
  expireWatches(): void {
    this.compact();
    for (const w of [...this.watchers]) {
      w.res.end(`${JSON.stringify({ type: 'ERROR', object: goneStatus(0, this.rv) })}\n`);
      this.watchers.delete(w);
    }
  }

  /** Ends every watch stream cleanly (as the server's watch timeout does). */
  closeWatches(): void {
    for (const w of [...this.watchers]) w.res.end();
    this.watchers.clear();
  }

  /** Destroys every open connection without a proper end of stream. */
  dropConnections(): void {
    this.watchers.clear();
    for (const s of this.sockets) s.destroy();
  }

  /** While held, new watch requests wait unanswered; releasing answers them in order. */
  holdWatches(hold: boolean): void {
    if (hold) {
      this.held ??= [];
      return;
    }
    const queued = this.held ?? [];
    this.held = null;
    for (const run of queued) run();
  }

  /** Held watch requests (see `holdWatches`). */
  heldWatchCount(): number {
    return this.held?.length ?? 0;
  }

  /** While unavailable, every request gets 503 (an API server that is starting or overloaded). */
  setAvailable(available: boolean): void {
    this.unavailable = !available;
  }

  /** Resolves when `predicate` holds, checked after every recorded request or posted Event. */
  async waitFor(predicate: () => boolean, what = 'condition', timeoutMs = 20_000): Promise<void> {
    if (predicate()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('activity', check);
        reject(new Error(`fake API server: timed out waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.off('activity', check);
        resolve();
      };
      this.on('activity', check);
    });
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private publish(ev: StoredEvent): void {
    this.history.push(ev);
    for (const w of this.watchers) {
      if (w.resource === ev.resource && (w.namespace === null || w.namespace === ev.namespace)) {
        w.res.write(`${JSON.stringify({ type: ev.type, object: ev.object })}\n`);
      }
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query });
    res.on('finish', () => this.emit('activity'));
    setImmediate(() => this.emit('activity'));
    if (this.unavailable) {
      sendJson(res, 503, status(503, 'ServiceUnavailable', 'the server is starting'));
      return;
    }
    const route = parsePath(url.pathname);
    if (!route) {
      sendJson(res, 404, status(404, 'NotFound', `the server could not find ${url.pathname}`));
      return;
    }
    if (req.method === 'POST' && route.resource === 'events' && route.namespace) {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        const ev = JSON.parse(body) as Obj;
        this.rv++;
        const stored = {
          ...ev,
          metadata: {
            ...ev.metadata,
            name: `${String(ev.metadata?.generateName ?? 'event.')}${this.rv}`,
            resourceVersion: String(this.rv),
          },
        };
        this.postedEvents.push(stored);
        sendJson(res, 201, stored);
        this.emit('activity');
      });
      return;
    }
    if (req.method === 'PUT' && route.status && RESOURCES[route.resource]) {
      this.putStatus(route.resource, route.namespace ?? '', route.name!, req, res);
      return;
    }
    if (req.method !== 'GET' || !RESOURCES[route.resource] || route.name !== undefined) {
      sendJson(res, 405, status(405, 'MethodNotAllowed', `${req.method} ${url.pathname} is not supported`));
      return;
    }
    if (query.watch === 'true' || query.watch === '1') {
      const run = () => this.watch(route.resource, route.namespace, query, res);
      if (this.held) this.held.push(run);
      else run();
      return;
    }
    const send = () => this.list(route.resource, route.namespace, res);
    if (this.listDelayMs > 0) setTimeout(send, this.listDelayMs);
    else send();
  }

  /** PUT …/NAME/status: replaces the status only (409 on a stale resourceVersion), emits MODIFIED. */
  private putStatus(
    resource: string,
    namespace: string,
    name: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): void {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const bucket = this.objects.get(resource);
      const key = `${namespace}/${name}`;
      const existing = bucket?.get(key);
      if (!existing) {
        sendJson(res, 404, status(404, 'NotFound', `${resource} "${name}" not found`));
        return;
      }
      const sent = JSON.parse(body) as Obj;
      const version = (sent.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      if (version !== undefined && version !== existing.metadata?.resourceVersion) {
        sendJson(
          res,
          409,
          status(
            409,
            'Conflict',
            'the object has been modified; please apply your changes to the latest version and try again',
          ),
        );
        return;
      }
      this.rv++;
      const object: Obj = {
        ...existing,
        status: sent.status,
        metadata: { ...existing.metadata, resourceVersion: String(this.rv) },
      };
      bucket!.set(key, object);
      this.statusWrites.push({ resource, namespace, name, status: sent.status });
      this.publish({ rv: this.rv, resource, namespace, type: 'MODIFIED', object });
      sendJson(res, 200, object);
      this.emit('activity');
    });
  }

  /** The object as stored (with its status), or undefined. */
  get(kind: string, namespace: string, name: string): Obj | undefined {
    const resource = KIND_TO_RESOURCE[kind]!;
    return this.objects.get(resource)?.get(`${CLUSTER_SCOPED.has(resource) ? '' : namespace}/${name}`);
  }

  private list(resource: string, namespace: string | null, res: ServerResponse): void {
    const { group, version, kind } = RESOURCES[resource]!;
    const items = [...(this.objects.get(resource)?.values() ?? [])].filter(
      (o) => namespace === null || o.metadata?.namespace === namespace,
    );
    sendJson(res, 200, {
      kind: `${kind}List`,
      apiVersion: group ? `${group}/${version}` : version,
      metadata: { resourceVersion: String(this.rv) },
      items,
    });
  }

  private watch(
    resource: string,
    namespace: string | null,
    query: Record<string, string>,
    res: ServerResponse,
  ): void {
    const from = Number(query.resourceVersion ?? '0');
    if (from !== 0 && from < this.compactedRv) {
      if (this.goneAsHttpStatus) {
        sendJson(res, 410, goneStatus(from, this.compactedRv));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: goneStatus(from, this.compactedRv) })}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    for (const ev of this.history) {
      if (ev.rv > from && ev.resource === resource && (namespace === null || ev.namespace === namespace)) {
        res.write(`${JSON.stringify({ type: ev.type, object: ev.object })}\n`);
      }
    }
    const w: Watcher = { resource, namespace, res };
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
  }
}

function parsePath(
  pathname: string,
): { resource: string; namespace: string | null; name?: string; status: boolean } | null {
  const m =
    /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?([a-z]+)(?:\/([^/]+)(\/status)?)?$/.exec(pathname) ??
    /^\/apis\/[^/]+\/[^/]+\/(?:namespaces\/([^/]+)\/)?([a-z]+)(?:\/([^/]+)(\/status)?)?$/.exec(pathname);
  if (!m) return null;
  return {
    namespace: m[1] ?? null,
    resource: m[2]!,
    ...(m[3] ? { name: m[3] } : {}),
    status: m[4] !== undefined,
  };
}

/** An object without its status and server-set metadata: what a change of generation compares. */
function specOf(o: Obj): unknown {
  const { status: _s, metadata, ...rest } = o;
  const {
    resourceVersion: _r,
    generation: _g,
    uid: _u,
    creationTimestamp: _c,
    ...meta
  } = (metadata ?? {}) as Record<string, unknown>;
  return { ...rest, metadata: meta };
}

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function goneStatus(from: number, oldest: number) {
  return status(410, 'Expired', `too old resource version: ${from} (${oldest})`);
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
