/**
 * `limitswitch demo` (`npm start`): the seed article's cafe as a local cluster in one process — the
 * control plane, three replicas and the tea/coffee upstreams, on the embedded memory store (or Redis
 * with `--redis`, so replicas and control planes in other processes can join).
 */
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { loadConfigFile } from '../config/index.ts';
import { zonesOfConfig } from '../control-plane/config-zones.ts';
import { startControlPlaneServer } from '../control-plane/server.ts';
import { ErrorLog } from '../replica/logs/error-log.ts';
import { Replica } from '../replica/replica.ts';
import { bindError } from '../shared/bind-error.ts';
import { checkServerNames } from './control-plane-command.ts';
import { openCliStore, type StoreFlags, storeOptions } from './open-store.ts';
import { type LogFlags, logOptions, processLogger } from './process-log.ts';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '../../examples/cafe/nginx.conf');

interface DemoFlags extends StoreFlags, LogFlags {
  config: string;
  host: string;
  controlPlanePort: string;
  replicaPorts: string;
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
  const config = loadConfigFile(flags.config);
  const redisUrl = flags.redis ?? process.env.REDIS_URL;
  // The banner says which store runs; the memory store's "one process only" warning is the point here.
  const logger = processLogger('limitswitch-demo', flags);
  // The banner says which store runs; the memory store's "one process only" warning is the point here.
  const store = openCliStore(flags, logger, { warnMemory: false });
  // What is open so far, closed again if a later part cannot start (a port in use).
  const opened: (() => Promise<void>)[] = [() => store.close()];
  const open = async <T>(start: Promise<T>, close: (part: T) => Promise<void>): Promise<T> => {
    const part = await start;
    opened.unshift(() => close(part));
    return part;
  };
  let controlPlane: Awaited<ReturnType<typeof startControlPlaneServer>>;
  let replicas: Replica[];
  let upstreams: Server[];
  const ports = flags.replicaPorts.split(',').map(Number);
  try {
    upstreams = [];
    for (const u of config.http.upstreams) {
      upstreams.push(await open(startCafeApp(u.name, u.servers[0]!.host, u.servers[0]!.port), closeServer));
    }
    controlPlane = await open(
      startControlPlaneServer({
        store,
        ...zonesOfConfig(config),
        serverNames: checkServerNames(flags.serverName),
        host: flags.host,
        port: Number(flags.controlPlanePort),
      }),
      (cp) => cp.close(),
    );
    const proxyPort = config.http.servers.flatMap((s) => s.listen.map((l) => l.port))[0] ?? 8081;
    const errorLog = new ErrorLog((line) => process.stderr.write(line));
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
    for (const replica of replicas) await open(replica.start(), () => replica.close());
  } catch (err) {
    for (const close of opened) await close();
    throw err;
  }

  process.stdout.write(
    banner(
      controlPlane.url,
      flags.host,
      ports,
      config.http.upstreams.map((u) => u.name),
      redisUrl
        ? `Redis at ${store.description}`
        : 'embedded memory store (this process only; --redis URL to share it)',
    ),
  );

  const stop = async (): Promise<void> => {
    process.stdout.write('\nstopping…\n');
    await Promise.all(replicas.map((r) => r.close()));
    await controlPlane.close();
    await Promise.all(upstreams.map(closeServer));
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
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

function banner(
  controlPlane: string,
  host: string,
  ports: number[],
  upstreams: string[],
  store: string,
): string {
  const first = `http://${host}:${ports[0]}`;
  const keyvals = `${controlPlane}/api/9/http/keyvals`;
  return `
limitswitch demo — cafe.example.com, limits switched without a reload

  control plane   ${controlPlane}   (NGINX Plus API v9, /limit_reqs, /cluster/replicas, /docs)
  dashboard       ${controlPlane}/dashboard
  store           ${store}
  replicas        ${ports.map((p) => `http://${host}:${p}`).join('  ')}
  upstreams       ${upstreams.join(', ')}

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
