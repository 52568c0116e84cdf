/**
 * One benchmark proxy process:
 * `node --import tsx bench/replica/proxy-main.ts <mode> <upstreamPort> [keepalive]`.
 * Modes: `off` (limits switched off: the hook passes everything), `engine` (the replica's engine hook
 * on a seed-style config with the switch on and a rate nothing reaches), `conn` (the same with
 * `limit_conn` in place of `limit_req`, a number of connections nothing reaches), `tls` (the engine
 * hook on a `listen … ssl http2` server: TLS, ALPN h2 or HTTP/1.1; the certificate and key files in
 * BENCH_TLS_CERT / BENCH_TLS_KEY). `keepalive`: the upstream block's `keepalive` (64, with
 * `keepalive_requests 1000000` as nginx's side has), or `none` for a block without it (the replica's
 * default). Reports `{ port }` to the parent over IPC.
 */
import { createServer } from 'node:net';
import { buildSite } from '../../src/config/build-site.ts';
import { loadConfigText } from '../../src/config/index.ts';
import { type DecideHook, type Decision, PASS } from '../../src/replica/http/contract/decision.ts';
import type { EdgeConf } from '../../src/replica/http/edge/edge-listener.ts';
import { ProxyServer } from '../../src/replica/http/proxy-server.ts';
import { DEFAULT_KEEPALIVE } from '../../src/replica/http/upstream/upstream-keepalive.ts';
import { UpstreamSet } from '../../src/replica/http/upstream/upstream-set.ts';
import { ErrorLog } from '../../src/replica/logs/error-log.ts';
import { engineHook } from '../../src/replica/policy/engine-hook.ts';
import { resolveProxyTargets } from '../../src/replica/policy/proxy-targets.ts';

const [mode = 'off', upstreamPortText = '', keepaliveText = '64'] = process.argv.slice(2);
const upstreamPort = Number(upstreamPortText);
const keepalive = keepaliveText === 'none' ? null : Number(keepaliveText);

/** A free port, so the engine's config can name the port it will be served on. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The seed article's shape: a keyval switch feeds a map that produces the key of a limit_req zone
 * (or, `limitConn`, of a limit_conn zone).
 */
function engineConfig(port: number, limitConn: boolean, tls = false): string {
  const limit = limitConn
    ? 'limit_conn conn_zone 65535;'
    : 'limit_req zone=req_zone_10 burst=1000000 nodelay;';
  return `http {
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    limit_req_zone $limit_key zone=req_zone_10:10m rate=1000000r/s;
    limit_conn_zone $limit_key zone=conn_zone:10m;
    upstream backend { server 127.0.0.1:${upstreamPort};${keepalive === null ? '' : ` keepalive ${keepalive}; keepalive_requests 1000000;`} }
    server {
      listen 127.0.0.1:${port}${tls ? ' ssl http2' : ''};
      server_name cafe.example.com;${
        tls
          ? `\n      ssl_certificate ${process.env.BENCH_TLS_CERT}; ssl_certificate_key ${process.env.BENCH_TLS_KEY};`
          : ''
      }
      location / { ${limit} proxy_pass http://backend; }
    }
  }`;
}

async function main(): Promise<void> {
  const port = await freePort();
  let upstreams = new UpstreamSet([
    {
      name: 'backend',
      servers: [{ host: '127.0.0.1', port: upstreamPort, weight: 1 }],
      // as nginx's side of the benchmark: kept connections are never recycled during a run
      keepalive:
        keepalive === null
          ? DEFAULT_KEEPALIVE
          : { ...DEFAULT_KEEPALIVE, connections: keepalive, requests: 1_000_000 },
    },
  ]);
  let decide: DecideHook<Decision>;
  let edge: EdgeConf | undefined;
  switch (mode) {
    case 'off':
      decide = () => PASS;
      break;
    case 'engine':
    case 'conn':
    case 'tls': {
      const config = loadConfigText(
        engineConfig(port, mode === 'conn', mode === 'tls'),
        'bench-replica.conf',
      );
      if (mode === 'tls') edge = { port, ssl: true, http2: true, servers: config.http.servers };
      const site = buildSite(config.http);
      site.keyvalZones.get('limitreq_uri')!.set('/', { value: '1', expireAtMs: null });
      const targets = resolveProxyTargets(site, config.http.upstreams);
      upstreams = new UpstreamSet(targets.groups);
      decide = engineHook({
        nowMs: () => Date.now(),
        site: () => site,
        targets: () => targets,
        errorLog: new ErrorLog((line) => process.stderr.write(line)),
        port,
        ssl: mode === 'tls',
      });
      break;
    }
    default:
      throw new Error(`unknown mode "${mode}"`);
  }
  const proxy = new ProxyServer({
    decide,
    upstreams,
    defaultUpstream: 'backend',
    ...(edge === undefined ? {} : { edge }),
  });
  await proxy.listen(port, '127.0.0.1');
  process.send?.({ port });
}

process.on('disconnect', () => process.exit(0));
// a clean exit, so `--cpu-prof` writes its profile
process.on('SIGINT', () => process.exit(0));
await main();
