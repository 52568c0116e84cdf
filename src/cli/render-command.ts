/**
 * `limitswitch render -f FILE…`: prints, offline, the nginx config the replicas would run for the given
 * Kubernetes objects (multi-document YAML or JSON: Ingress in `networking.k8s.io/v1` or the legacy
 * `extensions/v1beta1` shape, ConfigMaps, Services, EndpointSlices, and the Gateway API's GatewayClass,
 * Gateway, HTTPRoute with NGINX Gateway Fabric's RateLimitPolicy) — the way NGINX Ingress Controller
 * users read the generated `nginx.conf`. Problems go to stderr, and so do the annotations of served
 * Ingresses that nothing reads (as `migrate` names what it drops); any rejected object makes the exit
 * code 1.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { keyOf } from '../k8s/objects.ts';
import { ClusterTranslator } from '../k8s/translate/cluster-translator.ts';
import { problemMessage } from '../k8s/watch/event-recorder.ts';
import { emptyObjects, readYamlObjects, type YamlObjects } from '../k8s/yaml-objects.ts';
import { LimitswitchError } from '../shared/errors.ts';

export interface RenderOptions {
  readonly file: readonly string[];
  readonly ingressClass?: string;
  readonly watchIngressWithoutClass?: boolean;
  readonly configmap?: string;
  readonly replicas?: string;
  readonly listenPort?: string;
}

function usage(text: string): never {
  throw new LimitswitchError('RL_ERR_CLI_USAGE', `limitswitch render: ${text}`);
}

/** Files named on the command line; a folder stands for its `.yaml`, `.yml` and `.json` files. */
function expand(paths: readonly string[]): string[] {
  return paths.flatMap((p) => {
    if (p === '-') return [p];
    if (!statSync(p, { throwIfNoEntry: false })?.isDirectory()) return [p];
    return readdirSync(p)
      .filter((f) => /\.(ya?ml|json)$/.test(f))
      .sort()
      .map((f) => join(p, f));
  });
}

/** Every object of the files named (`-`: stdin), as `render` and `migrate` read them. */
export function readAll(paths: readonly string[], command = 'render'): YamlObjects {
  const objs = emptyObjects();
  for (const path of expand(paths)) {
    let text: string;
    try {
      text = readFileSync(path === '-' ? 0 : path, 'utf8');
    } catch (err) {
      throw new LimitswitchError(
        'RL_ERR_CLI_USAGE',
        `limitswitch ${command}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    readYamlObjects(text, path === '-' ? 'stdin' : path, objs);
  }
  return objs;
}

/** Renders and reports; returns the config text, the stderr lines and the exit code. */
export function render(options: RenderOptions): { text: string; messages: string[]; exitCode: number } {
  const objs = readAll(options.file);
  let configMap = null;
  if (options.configmap) {
    configMap = objs.configMaps.find((c) => keyOf(c) === options.configmap) ?? null;
    if (!configMap) usage(`ConfigMap ${options.configmap} is not in the given files`);
  } else if (objs.configMaps.length === 1) {
    configMap = objs.configMaps[0]!;
  } else if (objs.configMaps.length > 1) {
    usage(
      `several ConfigMaps given (${objs.configMaps.map(keyOf).join(', ')}); choose one with --configmap NAMESPACE/NAME`,
    );
  }
  const replicas = options.replicas === undefined ? null : Number(options.replicas);
  if (replicas !== null && !(Number.isInteger(replicas) && replicas >= 1))
    usage('--replicas must be a positive integer');
  const listenPort = options.listenPort === undefined ? undefined : Number(options.listenPort);
  if (listenPort !== undefined && !(Number.isInteger(listenPort) && listenPort >= 1 && listenPort <= 65535)) {
    usage('--listen-port must be a port number');
  }
  const translator = new ClusterTranslator({
    ingressClass: options.ingressClass ?? null,
    watchIngressWithoutClass: options.watchIngressWithoutClass === true,
    ...(listenPort !== undefined ? { listenPort } : {}),
  });
  const result = translator.translate({
    ingresses: objs.ingresses,
    services: objs.services,
    endpointSlices: objs.endpointSlices,
    configMap,
    replicas,
    secrets: objs.secrets,
    gateway: {
      gatewayClasses: objs.gatewayClasses,
      gateways: objs.gateways,
      httpRoutes: objs.httpRoutes,
      rateLimitPolicies: objs.rateLimitPolicies,
    },
  });
  // An Ingress of another class is left out, never silently: the replica with the same flags would
  // not serve it either.
  const skipped = objs.ingresses.flatMap((ing) => {
    const reason = translator.skipReason(ing);
    return reason === null ? [] : [`limitswitch: [warning] Ingress ${keyOf(ing)}: not served: ${reason}`];
  });
  if (skipped.length !== 0 && skipped.length === objs.ingresses.length) {
    skipped.push(
      `limitswitch: [warning] none of the ${objs.ingresses.length} Ingresses given is of class "${options.ingressClass}": no server rendered for them`,
    );
  }
  const messages = [
    ...skipped,
    ...result.problems.map((p) => {
      const level = p.severity === 'error' ? 'error' : 'warning';
      return `limitswitch: [${level}] ${p.object.kind} ${p.object.namespace}/${p.object.name}: ${problemMessage(p)}`;
    }),
  ];
  const exitCode = result.problems.some((p) => p.severity === 'error') ? 1 : 0;
  return { text: result.text, messages, exitCode };
}

export function registerRenderCommand(program: Command): void {
  program
    .command('render')
    .description('print the nginx config the replicas would run for Kubernetes objects (YAML), offline')
    .requiredOption(
      '-f, --file <path...>',
      'YAML/JSON files or folders of Ingress, ConfigMap, Service, EndpointSlice, Secret, GatewayClass, Gateway, HTTPRoute, RateLimitPolicy objects ("-" for stdin)',
    )
    .option('--ingress-class <name>', 'only Ingresses of this class (default: all)')
    .option(
      '--watch-ingress-without-class',
      'with --ingress-class: also Ingresses that name no class (as the replica flag of the same name)',
    )
    .option(
      '--configmap <namespace/name>',
      'the ConfigMap with http-snippets and global settings (default: the only one given)',
    )
    .option('--replicas <n>', 'live replica count for nginx.org/limit-req-scale')
    .option('--listen-port <port>', 'the port the generated servers listen on', '80')
    .action((options: RenderOptions) => {
      const out = render(options);
      process.stdout.write(out.text);
      for (const line of out.messages) process.stderr.write(`${line}\n`);
      process.exitCode = out.exitCode;
    });
}
