/**
 * `limitswitch demo` (`npm start`): the seed article's cafe as a local cluster in one process — the
 * control plane, three replicas and the tea/coffee upstreams, on the embedded memory store (or Redis
 * with `--redis`, so replicas and control planes in other processes can join).
 */
import { createWriteStream, openSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { loadConfigFile } from '../config/index.ts';
import type { Config } from '../config/model.ts';
import { zonesOfConfig } from '../control-plane/config-zones.ts';
import { startControlPlaneServer } from '../control-plane/server.ts';
import { ErrorLog } from '../replica/logs/error-log.ts';
import { Replica } from '../replica/replica.ts';
import { bindError } from '../shared/bind-error.ts';
import { hasCode, LimitswitchError } from '../shared/errors.ts';
import { checkServerNames } from './control-plane-command.ts';
import { openCliStore, type StoreFlags, storeOptions } from './open-store.ts';
import { type LogFlags, logOptions, processLogger } from './process-log.ts';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '../../examples/cafe/nginx.conf');
/** Where the replicas' error log goes unless `--error-log` says: off the terminal the banner is on. */
const ERROR_LOG = join(tmpdir(), 'limitswitch-demo-error.log');

interface DemoFlags extends StoreFlags, LogFlags {
  config: string;
  host: string;
  controlPlanePort: string;
  replicaPorts: string;
  upstreamPorts?: string;
  errorLog: string;
  serverName: string[];
}

export function registerDemoCommand(program: Command): void {
  const command = program
    .command('demo')
    .description('run the cafe example locally: control plane, three replicas, tea and coffee upstreams')
    .option('-c, --config <file>', 'the replicas’ configuration', EXAMPLE)
    .option('--host <address>', 'address everything listens on', '127.0.0.1')
    .option('--control-plane-port <port>', 'control plane port', '8080')
    .option('--replica-ports <ports>', 'one port per replica, comma-separated', '8081,8082,8083')
    .option(
      '--upstream-ports <ports>',
      "one port per upstream block, in the configuration's order, comma-separated (default: the configuration's; the cafe's tea and coffee: 8091,8092)",
    )
    .option(
      '--error-log <file>',
      'the replicas’ nginx-format error log, appended to: a line per rejected request ("stderr" for the terminal)',
      ERROR_LOG,
    )
    .option(
      '--server-name <name...>',
      "names of the control plane a write's Host may be, besides IP addresses and localhost",
      [],
    );
  storeOptions(command, 'shared store (default: REDIS_URL, else the embedded memory store)');
  // Warnings and errors only: the banner says the rest.
  logOptions(command, 'warn').action(async (flags: DemoFlags) => {
    await runDemo(flags);
  });
}

async function runDemo(flags: DemoFlags): Promise<void> {
  const ports = parsePorts('--replica-ports', flags.replicaPorts);
  const controlPlanePort = parsePorts('--control-plane-port', flags.controlPlanePort, [1, 'one port'])[0]!;
  const loaded = loadConfigFile(flags.config);
  const upstreamPorts =
    flags.upstreamPorts === undefined
      ? loaded.http.upstreams.map((u) => u.servers[0]!.port)
      : parsePorts('--upstream-ports', flags.upstreamPorts, [
          loaded.http.upstreams.length,
          `one port per upstream block (${loaded.http.upstreams.map((u) => u.name).join(', ')})`,
        ]);
  const redisUrl = flags.redis ?? process.env.REDIS_URL;
  const errorLogFile = flags.errorLog === 'stderr' ? null : resolve(flags.errorLog);
  const errorStream = errorLogFile === null ? process.stderr : openErrorLog(errorLogFile);
  const logger = processLogger('limitswitch-demo', flags);
  // The banner says which store runs; the memory store's "one process only" warning is the point here.
  const store = openCliStore(flags, logger, { warnMemory: false });
  // What is open so far, closed again if a later part cannot start (a port in use).
  const opened: (() => Promise<void>)[] = [() => store.close()];
  const open = async <T>(start: Promise<T>, close: (part: T) => Promise<void>, move: string): Promise<T> => {
    const part = await start.catch((err: unknown) => {
      throw movable(err, move);
    });
    opened.unshift(() => close(part));
    return part;
  };
  let config: Config;
  let controlPlane: Awaited<ReturnType<typeof startControlPlaneServer>>;
  let replicas: Replica[];
  let upstreams: { name: string; url: string; server: Server }[];
  try {
    upstreams = [];
    for (const [i, u] of loaded.http.upstreams.entries()) {
      const host = u.servers[0]!.host;
      const server = await open(
        startCafeApp(u.name, host, upstreamPorts[i]!),
        closeServer,
        '--upstream-ports <ports>',
      );
      upstreams.push({ name: u.name, url: `http://${hostPort(host, boundPort(server))}`, server });
    }
    // The replicas proxy to the upstreams where they listen now (--upstream-ports moves them).
    config = withUpstreamPorts(
      loaded,
      upstreams.map((u) => boundPort(u.server)),
    );
    controlPlane = await open(
      startControlPlaneServer({
        store,
        ...zonesOfConfig(config),
        serverNames: checkServerNames(flags.serverName),
        host: flags.host,
        port: controlPlanePort,
      }),
      (cp) => cp.close(),
      '--control-plane-port <port>',
    );
    const proxyPort = proxyPortOf(config);
    // The replicas' request lines (one per rejected request under load) go to the error log file:
    // the terminal keeps the banner and the process log (start, stop, store trouble).
    const errorLog = new ErrorLog((line) => errorStream.write(line));
    replicas = ports.map(
      (port, i) =>
        new Replica({
          id: `replica-${i + 1}`,
          config,
          store,
          host: flags.host,
          portMap: new Map([[proxyPort, port]]),
          errorLog,
          // Store trouble and store resets are warnings: never silent, in the demo either.
          log: (level, message, fields) => logger[level]({ replica: `replica-${i + 1}`, ...fields }, message),
        }),
    );
    for (const replica of replicas) {
      await open(replica.start(), () => replica.close(), '--replica-ports <ports>');
    }
  } catch (err) {
    for (const close of opened) await close();
    await endStream(errorStream);
    throw err;
  }

  process.stdout.write(
    banner({
      controlPlane: controlPlane.url,
      replicas: replicas.map((r) => r.addresses().map((a) => `http://${a}`)),
      replicaPorts: replicas.map((r) => r.ports.get(proxyPortOf(config)) ?? 0),
      upstreams: upstreams.map((u) => `${u.name} ${u.url}`),
      errorLog: errorLogFile,
      store: redisUrl
        ? `Redis at ${store.description}`
        : 'embedded memory store (this process only; --redis URL to share it)',
    }),
  );

  const stop = async (): Promise<void> => {
    process.stdout.write('\nstopping…\n');
    await Promise.all(replicas.map((r) => r.close()));
    await controlPlane.close();
    await Promise.all(upstreams.map((u) => closeServer(u.server)));
    await store.close();
    await endStream(errorStream);
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

/**
 * `--flag 8081,8082`: ports 0–65535 (0: one the system picks), as many as `expected` says when it is
 * given (`[1, 'one port']`); `RL_ERR_CLI_USAGE` otherwise.
 */
function parsePorts(flag: string, value: string, expected?: readonly [number, string]): number[] {
  const ports = value.split(',').map((p) => p.trim());
  const bad = ports.find((p) => !/^[0-9]{1,5}$/.test(p) || Number(p) > 65535);
  if (bad !== undefined) {
    throw new LimitswitchError('RL_ERR_CLI_USAGE', `${flag} ${value}: "${bad}" is not a port (0–65535)`);
  }
  if (expected !== undefined && ports.length !== expected[0]) {
    throw new LimitswitchError('RL_ERR_CLI_USAGE', `${flag} ${value}: expected ${expected[1]}`);
  }
  return ports.map(Number);
}

/**
 * A bind failure names the flag that moves the port (`— move it with --replica-ports <ports>`), or
 * `--host` when the address is not this machine's.
 */
function movable(err: unknown, move: string): unknown {
  if (!hasCode(err, 'RL_ERR_BIND')) return err;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  const hint = code === 'EADDRNOTAVAIL' && move !== '--upstream-ports <ports>' ? '--host <address>' : move;
  return new LimitswitchError('RL_ERR_BIND', `${err.message} — move it with ${hint}`, { cause: err.cause });
}

/** The error log file, opened (created) for appending now: a path it cannot write stops the demo at once. */
function openErrorLog(file: string): NodeJS.WritableStream {
  try {
    return createWriteStream(file, { fd: openSync(file, 'a') });
  } catch (err) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `--error-log ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** Everything written reaches the file before the process exits (stderr is left open). */
function endStream(stream: NodeJS.WritableStream): Promise<void> {
  if (stream === process.stderr) return Promise.resolve();
  return new Promise((done) => stream.end(done));
}

/** The configuration with each upstream block's first server on the port the demo's app listens on. */
function withUpstreamPorts(config: Config, ports: readonly number[]): Config {
  return {
    ...config,
    http: {
      ...config.http,
      upstreams: config.http.upstreams.map((u, i) => ({
        ...u,
        servers: u.servers.map((s, j) => (j === 0 ? { ...s, port: ports[i]! } : s)),
      })),
    },
  };
}

function proxyPortOf(config: Config): number {
  return config.http.servers.flatMap((s) => s.listen.map((l) => l.port))[0] ?? 8081;
}

function boundPort(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** NGINX's cafe demo app: answers with its name and the URI it got. */
function startCafeApp(name: string, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`Server name: ${name}\nURI: ${req.url}\n`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(bindError(host, port, err)));
    server.listen(port, host, () => resolve(server));
  });
}

interface BannerFacts {
  readonly controlPlane: string;
  /** Each replica's listeners, as URLs. */
  readonly replicas: readonly (readonly string[])[];
  /** Each replica's port for the configuration's first `listen` (the one `--replica-ports` moves). */
  readonly replicaPorts: readonly number[];
  /** `name url` of each upstream app. */
  readonly upstreams: readonly string[];
  readonly store: string;
  /** The replicas' error log file; null: the terminal (`--error-log stderr`). */
  readonly errorLog: string | null;
}

function banner(facts: BannerFacts): string {
  const { controlPlane, replicaPorts: ports } = facts;
  const first = facts.replicas[0]?.[0] ?? controlPlane;
  // As a URL has it: IPv6 in brackets.
  const host = new URL(first).hostname;
  const keyvals = `${controlPlane}/api/9/http/keyvals`;
  return `
limitswitch demo — cafe.example.com, limits switched without a reload

  control plane   ${controlPlane}   (NGINX Plus API v9, /limit_reqs, /cluster/replicas, /docs)
  dashboard       ${controlPlane}/dashboard
  store           ${facts.store}
  replicas        ${facts.replicas.map((urls) => urls.join(' ')).join('  ')}
  upstreams       ${facts.upstreams.join('  ')}
  error log       ${
    facts.errorLog === null
      ? 'this terminal (stderr): a line per rejected request'
      : `${facts.errorLog}   (a line per rejected request, as nginx logs it: tail -f it; --error-log moves it)`
  }

  ports move with --control-plane-port, --replica-ports and --upstream-ports

Try it:

  # 1. switch request limiting on for /coffee, on every replica at once
  curl -X POST -H 'Content-Type: application/json' -d '{"/coffee":"1","/tea":"0"}' '${keyvals}/limitreq_uri?wait=applied'

  # 2. load it: each client address gets 20 r/s with burst 1, the rest is rejected (503), on every replica
  for p in ${ports.join(' ')}; do for i in $(seq 10); do curl -s -o /dev/null -w '%{http_code} ' -H 'Host: cafe.example.com' http://${host}:$p/coffee/latte & done; wait; echo; done

  # 3. what the limits did, summed over the cluster (per replica with ?by=replica, one zone with
  #    /limit_reqs/req_zone_20); replicas send their counters once a second, so give them that second
  sleep 1; curl ${controlPlane}/limit_reqs

  # 4. limit the whole server_name instead, then switch everything off
  curl -X PATCH -H 'Content-Type: application/json' -d '{"/coffee":"0"}' ${keyvals}/limitreq_uri
  curl -X POST -H 'Content-Type: application/json' -d '{"cafe.example.com":"1"}' ${keyvals}/limitper_server
  curl -X DELETE ${keyvals}/limitper_server

  # the replicas' view: curl -H 'Host: cafe.example.com' ${first}/tea

Ctrl-C stops everything.
`;
}
