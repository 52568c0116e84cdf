/**
 * `limitswitch control-plane`: the NGINX Plus API for the cluster, on the shared store.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadAlertRules } from '../automation/alert-rules.ts';
import { loadConfigFile } from '../config/index.ts';
import type { ListenSpec } from '../config/model.ts';
import type { AuthOptions } from '../control-plane/access-control.ts';
import { parseAllowRange, parseTokens } from '../control-plane/access-control.ts';
import { apiServerBlock } from '../control-plane/api-server-block.ts';
import { zonesOfConfig } from '../control-plane/config-zones.ts';
import { OwnHosts } from '../control-plane/own-hosts.ts';
import { startControlPlaneServer } from '../control-plane/server.ts';
import { parseHostPort } from '../engine/net/address-text.ts';
import { LimitswitchError } from '../shared/errors.ts';
import { openCliStore, type StoreFlags, storeOptions } from './open-store.ts';
import { type LogFlags, logOptions, processLogger } from './process-log.ts';

interface ControlPlaneFlags extends StoreFlags, LogFlags {
  listen?: string;
  config?: string;
  tokenFile?: string;
  allow: string[];
  serverName: string[];
  readOnly: boolean;
  readAuth: boolean;
  alertRules?: string;
}

export function registerControlPlaneCommand(program: Command): void {
  const command = program
    .command('control-plane')
    .description('serve the NGINX Plus API (keyvals, limit_reqs) and cluster views for every replica')
    .option(
      '--listen <host:port>',
      "address to listen on (default: the listen of -c FILE's api server, else 127.0.0.1:8080)",
    )
    .option('-c, --config <file>', 'nginx.conf whose keyval_zone/limit_req_zone the API serves')
    .option(
      '--token-file <file>',
      'bearer tokens for writes, one "id:token" per line (or LIMITSWITCH_TOKENS)',
    )
    .option('--allow <cidr...>', 'client addresses allowed to write (and to read with --read-auth)', [])
    .option(
      '--server-name <name...>',
      "names of this API a write's Host may be, besides IP addresses and localhost (nginx server_name syntax: api.example.com, *.example.com)",
      [],
    )
    .option('--read-only', "refuse every write with 405 MethodDisabled (NGINX's api write=off)", false)
    .option('--read-auth', 'reads of the API, cluster views and audit need a token too', false)
    .option('--alert-rules <file>', 'rules for POST /hooks/alertmanager: which alerts change which keyvals');
  storeOptions(
    command,
    'shared store: redis://, rediss://, redis+sentinel://, redis+cluster:// (default: REDIS_URL, else in memory)',
  );
  logOptions(command).action(async (flags: ControlPlaneFlags) => {
    await runControlPlane(flags);
  });
}

async function runControlPlane(flags: ControlPlaneFlags): Promise<void> {
  const config = flags.config ? loadConfigFile(flags.config) : null;
  // The file's api server: its listen, allow/deny and write=off apply, as NGINX Plus serves them.
  const apiServer = config ? apiServerBlock(config) : null;
  const listenText = flags.listen ?? (apiServer?.listen ? addressOf(apiServer.listen) : '127.0.0.1:8080');
  const listen = parseHostPort(listenText, true);
  if (listen.error !== undefined || listen.port === null) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `--listen ${listenText}: ${listen.error ?? 'port required'}`,
    );
  }
  const auth = {
    ...authOptions(flags),
    clientRules: apiServer?.access ?? [],
    readOnly: flags.readOnly || apiServer?.write === false,
  };
  // A write's Host: IP literals and localhost, the flag's names and the api server's server_name.
  const serverNames = [...checkServerNames(flags.serverName), ...(apiServer?.serverNames ?? [])];
  const zones = config ? zonesOfConfig(config) : { keyvalZones: [], limitReqZones: [], limitConnZones: [] };
  // With -c, a rule naming a zone the file does not declare is one of the file's errors.
  const alertRules = flags.alertRules
    ? loadAlertRules(
        flags.alertRules,
        flags.config ? { keyvalZones: zones.keyvalZones.map((z) => z.name) } : {},
      )
    : undefined;
  const logger = processLogger('limitswitch-control-plane', flags);
  for (const name of OwnHosts.regexNames(apiServer?.serverNames ?? [])) {
    logger.warn(
      { server_name: name },
      'a regex server_name of the api server is not matched against the Host of writes: name those hosts with --server-name',
    );
  }
  const store = openCliStore(flags, logger);
  const server = await startControlPlaneServer({
    store,
    auth,
    serverNames,
    ...zones,
    alertRules,
    host: listen.host ?? '0.0.0.0',
    port: listen.port,
    logger,
  });
  logger.info({ url: server.url }, 'control plane listening');
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'closing');
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  await store.close();
}

function authOptions(flags: ControlPlaneFlags): AuthOptions {
  const fromFile = flags.tokenFile ? parseTokens(readText(flags.tokenFile), flags.tokenFile) : null;
  const fromEnv = process.env.LIMITSWITCH_TOKENS;
  const tokens =
    fromFile ?? (fromEnv ? parseTokens(fromEnv, 'LIMITSWITCH_TOKENS') : new Map<string, string>());
  for (const cidr of flags.allow) {
    try {
      parseAllowRange(cidr);
    } catch (err) {
      throw new LimitswitchError('RL_ERR_CLI_USAGE', `--allow: ${(err as Error).message}`);
    }
  }
  return { tokens, allow: flags.allow, readOnly: flags.readOnly, readAuth: flags.readAuth };
}

/** `--server-name` values, each checked (the command stops on the first that cannot be one). */
export function checkServerNames(names: string[]): string[] {
  for (const name of names) {
    const invalid = OwnHosts.invalid(name);
    if (invalid !== null) throw new LimitswitchError('RL_ERR_CLI_USAGE', `--server-name: ${invalid}`);
  }
  return names;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new LimitswitchError('RL_ERR_CLI_USAGE', `cannot read ${file}: ${(err as Error).message}`);
  }
}

/** `listen 9999;` → `0.0.0.0:9999`, as nginx binds it. */
function addressOf(spec: ListenSpec): string {
  const host = spec.host ?? '0.0.0.0';
  return host.includes(':') ? `[${host}]:${spec.port}` : `${host}:${spec.port}`;
}
