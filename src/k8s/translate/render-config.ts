/**
 * Assembles fragments into one nginx config text: the ConfigMap's http-level settings, each Ingress's
 * zones and upstreams, a default server (NIC answers unknown hosts with 404), and one server per host.
 * Conflicts are settled as NIC settles them: the oldest Ingress (or master) owns a host, minions join
 * their master's host, and the oldest minion wins a duplicate path.
 */
import type { ObjectRef, TranslationProblem } from '../objects.ts';
import type { GlobalSettings } from './configmap-settings.ts';
import type { IngressFragment, LocationFragment, ServerFragment, UpstreamFragment } from './fragment.ts';
import { ConfigWriter, directive, quoteArg } from './nginx-text.ts';
import { asHostRegex, ingressNginxOrder } from './routing-annotations.ts';
import { NO_SECRETS, type TlsSecretFile, type TlsSecretView } from './tls-secrets.ts';

export interface RenderOptions {
  /** The port the replica serves Ingress traffic on (`listen`). Default 80. */
  readonly listenPort?: number;
  /** The ConfigMap the settings came from, for a comment. */
  readonly configMap?: ObjectRef | null;
  /** Validation of a lone minion: give it a server of its own instead of dropping it as an orphan. */
  readonly standaloneMinions?: boolean;
  /** The port TLS hosts are served on (`listen … ssl`). Default 443. */
  readonly tlsListenPort?: number;
  /** The usable TLS Secrets (tls-secrets.ts). Default: none. */
  readonly secrets?: TlsSecretView;
  /** http-level blocks shared by several fragments (the Gateway API's routing maps and zones). */
  readonly httpBlocks?: readonly { readonly lines: readonly string[]; readonly field: string }[];
}

export interface RenderedConfig {
  readonly text: string;
  /** The object field a 1-based line came from (snippet lines only). */
  readonly originOf: (line: number) => string | undefined;
  readonly problems: readonly TranslationProblem[];
}

interface HostPlan {
  owner: IngressFragment;
  server: ServerFragment;
  locations: LocationFragment[];
}

function byOldest(a: IngressFragment, b: IngressFragment): number {
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function warn(object: ObjectRef, field: string, error: string): TranslationProblem {
  return { object, field, error, severity: 'warning' };
}

function planHosts(
  fragments: readonly IngressFragment[],
  opts: RenderOptions,
  problems: TranslationProblem[],
) {
  const sorted = [...fragments].sort(byOldest);
  const hosts = new Map<string, HostPlan>();
  const served = new Set<IngressFragment>();
  for (const f of sorted) {
    if (f.role === 'minion' && !opts.standaloneMinions) continue;
    f.servers.forEach((server, i) => {
      const taken = hosts.get(server.host);
      if (taken) {
        problems.push(
          warn(
            f.ref,
            `spec.rules[${i}].host`,
            `host "${server.host}" is taken by ${taken.owner.key}; this rule is ignored`,
          ),
        );
        return;
      }
      hosts.set(server.host, { owner: f, server, locations: [...server.locations] });
      served.add(f);
    });
  }
  if (opts.standaloneMinions) return { hosts, served };
  for (const f of sorted) {
    if (f.role !== 'minion') continue;
    const server = f.servers[0];
    if (!server) continue;
    const plan = hosts.get(server.host);
    if (plan?.owner.role !== 'master') {
      problems.push(
        warn(
          f.ref,
          'spec.rules[0].host',
          `no master Ingress for host "${server.host}"; the minion is ignored`,
        ),
      );
      continue;
    }
    for (const loc of server.locations) {
      const clash = plan.locations.find((l) => l.match === loc.match && l.path === loc.path);
      if (clash) {
        problems.push(
          warn(
            f.ref,
            'spec.rules[0].http.paths',
            `path "${loc.path}" of host "${server.host}" is taken by ${clash.owner}; ignored`,
          ),
        );
        continue;
      }
      plan.locations.push(loc);
    }
    served.add(f);
  }
  return { hosts, served };
}

function writeRealIp(w: ConfigWriter, s: GlobalSettings): void {
  for (const from of s.setRealIpFrom) w.line(directive('set_real_ip_from', from));
  if (s.realIpHeader) w.line(directive('real_ip_header', s.realIpHeader));
  if (s.realIpRecursive) w.line(directive('real_ip_recursive', 'on'));
}

/**
 * The header lines NIC's templates write in every proxied location (nginx.ingress.tmpl,
 * nginx.virtualserver.tmpl): the upstream gets what it gets behind NIC. They are the location's own
 * `proxy_set_header` list, so a snippet's lines add to it rather than replace it, as in NIC.
 */
const NIC_PROXY_HEADERS = [
  'proxy_set_header Host $host;',
  'proxy_set_header X-Real-IP $remote_addr;',
  'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
  'proxy_set_header X-Forwarded-Host $host;',
  'proxy_set_header X-Forwarded-Port $server_port;',
  'proxy_set_header X-Forwarded-Proto $scheme;',
] as const;

function writeLocation(w: ConfigWriter, loc: LocationFragment): void {
  const match = loc.match === 'prefix' ? '' : `${loc.match} `;
  const regex = loc.match === '~' || loc.match === '~*';
  // ingress-nginx quotes its regex locations whatever they hold
  const path = loc.match === '~*' ? `"${loc.path}"` : regex ? quoteArg(loc.path) : loc.path;
  w.open(`location ${match}${path}`);
  w.snippet(loc.comments);
  w.snippet(loc.snippets, loc.snippetsField);
  for (const more of loc.moreSnippets ?? []) w.snippet(more.lines, more.field);
  w.snippet(loc.rewriteLines ?? []);
  for (const line of NIC_PROXY_HEADERS) w.line(line);
  w.line(directive('proxy_pass', loc.proxyPass ?? `http://${loc.upstream}`));
  w.snippet(loc.limitLines);
  w.close();
}

/**
 * A host's server-level lines and locations: ingress-nginx's enforced regex (one location of the host
 * with `use-regex` or `rewrite-target` makes them all `~*`, in its order), then each server-level
 * rewrite line the locations' Ingresses bring, once.
 */
function writeHostLocations(w: ConfigWriter, server: ServerFragment, locations: readonly LocationFragment[]) {
  w.snippet(server.serverSnippets, server.serverSnippetsField);
  for (const more of server.moreServerSnippets ?? []) w.snippet(more.lines, more.field);
  w.snippet([...new Set(locations.flatMap((loc) => loc.serverLines ?? []))]);
  const regexHost = locations.some((loc) => loc.regexHost === true);
  const written = regexHost ? ingressNginxOrder(locations.map(asHostRegex)) : locations;
  for (const loc of written) writeLocation(w, loc);
}

function writeUpstream(w: ConfigWriter, u: UpstreamFragment): void {
  w.open(`upstream ${quoteArg(u.name)}`);
  if (u.note) w.line(`# ${u.note}: placeholder server`);
  for (const s of u.servers) w.line(directive('server', s));
  w.close();
}

/** The config text for `settings` plus `fragments` (already validated one by one). */
export function renderConfig(
  settings: GlobalSettings,
  fragments: readonly IngressFragment[],
  opts: RenderOptions = {},
): RenderedConfig {
  const problems: TranslationProblem[] = [];
  const port = String(opts.listenPort ?? 80);
  const { hosts, served } = planHosts(fragments, opts, problems);
  const used = [...served].sort(byOldest);

  const w = new ConfigWriter();
  w.line('# Generated by limitswitch from Kubernetes objects; edit the objects, not this text.');
  w.open('http');
  if (settings.httpSnippets.length > 0) {
    const cm = opts.configMap;
    w.line(cm ? `# ConfigMap ${cm.namespace}/${cm.name}: http-snippets` : '# ConfigMap: http-snippets');
    w.snippet(settings.httpSnippets, 'data[http-snippets]');
    w.blank();
  }
  if (settings.limitReqStatus !== null)
    w.line(directive('limit_req_status', String(settings.limitReqStatus))).blank();

  for (const f of used) {
    for (const block of f.httpBlocks) w.snippet(block.lines, block.field).blank();
  }
  for (const block of opts.httpBlocks ?? []) w.snippet(block.lines, block.field).blank();
  const upstreams = new Map<string, UpstreamFragment>();
  for (const f of used) for (const u of f.upstreams) upstreams.set(u.name, u);
  for (const name of [...upstreams.keys()].sort()) writeUpstream(w.blank(), upstreams.get(name)!);

  const defaultPlan = hosts.get('');
  w.blank().open('server');
  w.line(
    defaultPlan
      ? `# default server: Ingress ${defaultPlan.owner.key}`
      : '# default server: no Ingress rule without a host',
  );
  w.line(directive('listen', port, 'default_server'));
  w.line(directive('server_name', '_'));
  writeRealIp(w, settings);
  if (defaultPlan) {
    writeHostLocations(w, defaultPlan.server, defaultPlan.locations);
  } else {
    w.line(directive('return', '404'));
  }
  w.close();

  const tlsPort = String(opts.tlsListenPort ?? 443);
  for (const host of [...hosts.keys()].filter((h) => h !== '').sort()) {
    const plan = hosts.get(host)!;
    const secret = plan.server.tls ? tlsSecretOf(plan, opts.secrets ?? NO_SECRETS, problems) : null;
    const owner = `# ${plan.owner.role === 'master' ? 'master' : plan.owner.ref.kind} ${plan.owner.ref.namespace}/${plan.owner.ref.name}`;
    w.blank().open('server');
    w.line(owner);
    const plain = plan.server.plainHttp !== false;
    if (plain && (secret === null || plan.server.sslRedirect === null)) w.line(directive('listen', port));
    if (secret !== null) {
      w.line(
        `# TLS: secret ${plan.owner.ref.namespace}/${plan.server.tlsSecret} (resourceVersion ${secret.version || 'none'})`,
      );
      w.line(directive('listen', tlsPort, 'ssl'));
    }
    w.line(directive('server_name', host));
    if (secret !== null) {
      w.line(directive('ssl_certificate', secret.path));
      w.line(directive('ssl_certificate_key', secret.path));
    }
    writeRealIp(w, settings);
    writeHostLocations(w, plan.server, plan.locations);
    w.close();
    if (plain && secret !== null && plan.server.sslRedirect !== null) {
      // NIC and ingress-nginx redirect plain HTTP to a TLS host (ssl-redirect, on by default)
      w.blank().open('server');
      w.line(`${owner}: plain HTTP is redirected (ssl-redirect)`);
      w.line(directive('listen', port));
      w.line(directive('server_name', host));
      w.line(directive('return', String(plan.server.sslRedirect), 'https://$host$request_uri'));
      w.close();
    }
  }
  w.close();
  return { text: w.toString(), problems, originOf: (line) => w.originOf(line) };
}

/** The Secret a TLS host is served with, or null (reported: the host is then plain HTTP only). */
function tlsSecretOf(
  plan: HostPlan,
  secrets: TlsSecretView,
  problems: TranslationProblem[],
): TlsSecretFile | null {
  const name = plan.server.tlsSecret;
  const secret = name === null ? null : secrets.file(plan.owner.ref.namespace, name);
  if (secret === null) {
    const why =
      name === null
        ? 'names no secretName'
        : `names secret ${plan.owner.ref.namespace}/${name}, which is missing or unusable`;
    problems.push(
      warn(
        plan.owner.ref,
        'spec.tls',
        `TLS for host "${plan.server.host}" ${why}; the host is served over plain HTTP only`,
      ),
    );
  }
  return secret;
}
