/**
 * `limitswitch migrate -f FILE…`: Ingresses with NIC or ingress-nginx annotations → Gateway API YAML
 * (GatewayClass, Gateway, HTTPRoutes, NGF RateLimitPolicies) that limitswitch renders into the same
 * limits. YAML on stdout; what is not carried over, and errors, on stderr; exit code 1 on errors.
 */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { migrateIngresses } from '../k8s/migrate/ingress-to-gateway.ts';
import { keyOf } from '../k8s/objects.ts';
import { LimitswitchError } from '../shared/errors.ts';
import { readAll } from './render-command.ts';

export interface MigrateCommandOptions {
  readonly file: readonly string[];
  readonly configmap?: string;
  readonly gatewayClass?: string;
  readonly gatewayName?: string;
  readonly gatewayNamespace?: string;
}

export function migrate(options: MigrateCommandOptions): {
  text: string;
  messages: string[];
  exitCode: number;
} {
  const objs = readAll(options.file, 'migrate');
  let configMap = null;
  if (options.configmap) {
    configMap = objs.configMaps.find((c) => keyOf(c) === options.configmap) ?? null;
    if (!configMap)
      throw new LimitswitchError(
        'RL_ERR_CLI_USAGE',
        `limitswitch migrate: ConfigMap ${options.configmap} is not in the given files`,
      );
  } else if (objs.configMaps.length === 1) configMap = objs.configMaps[0]!;
  else if (objs.configMaps.length > 1)
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `limitswitch migrate: several ConfigMaps given (${objs.configMaps.map(keyOf).join(', ')}); choose one with --configmap NAMESPACE/NAME`,
    );
  const out = migrateIngresses(objs.ingresses, configMap, objs.services, {
    ...(options.gatewayClass ? { gatewayClass: options.gatewayClass } : {}),
    ...(options.gatewayName ? { gatewayName: options.gatewayName } : {}),
    ...(options.gatewayNamespace ? { gatewayNamespace: options.gatewayNamespace } : {}),
  });
  const text = out.objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
  const messages = [
    ...out.warnings.map((w) => `limitswitch: [warning] ${w}`),
    ...out.errors.map((e) => `limitswitch: [error] ${e}`),
  ];
  return { text, messages, exitCode: out.errors.length > 0 ? 1 : 0 };
}

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      'convert Ingresses (NIC and ingress-nginx annotations) to Gateway API objects and NGF RateLimitPolicies (YAML)',
    )
    .requiredOption(
      '-f, --file <path...>',
      'YAML/JSON files or folders of Ingress, ConfigMap, Service objects ("-" for stdin)',
    )
    .option(
      '--configmap <namespace/name>',
      'the ConfigMap with global settings (default: the only one given)',
    )
    .option('--gateway-class <name>', 'an existing GatewayClass to use (default: print a "limitswitch" one)')
    .option('--gateway-name <name>', 'the Gateway to create', 'limitswitch')
    .option(
      '--gateway-namespace <ns>',
      "the Gateway's namespace (default: the Ingresses', when they share one)",
    )
    .action((options: MigrateCommandOptions) => {
      const out = migrate(options);
      process.stdout.write(out.text);
      for (const line of out.messages) process.stderr.write(`${line}\n`);
      process.exitCode = out.exitCode;
    });
}
