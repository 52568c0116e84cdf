/**
 * A worker thread of a replica (`worker_processes N`): serves every port with SO_REUSEPORT on a site
 * built on the main thread's zones, so its decisions are those of one set of zones, as nginx's
 * workers share theirs. It keeps its own upstream connections and balancer (nginx's workers do,
 * without an upstream `zone`), and reports logs, finished exchanges and counts to the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildSite } from '../../config/build-site.ts';
import { systemClock } from '../../shared/clock.ts';
import { shareConnectionNumbers } from '../http/contract/client-connection.ts';
import { UpstreamSet } from '../http/upstream/upstream-set.ts';
import { Listeners } from '../listening/listeners.ts';
import { RequestCounts } from '../listening/request-counts.ts';
import { loggedRequest } from '../logs/access-log.ts';
import { reportFaults } from '../logs/data-path-faults.ts';
import { ErrorLog } from '../logs/error-log.ts';
import { resolveProxyTargets } from '../policy/proxy-targets.ts';
import { RemoteAdmissions } from './remote-admissions.ts';
import { RemoteTlsSessions } from './remote-tls-sessions.ts';
import { type WorkerCommand, WorkerEventBatch } from './worker-events.ts';
import type { WorkerStart } from './worker-start.ts';

if (parentPort === null) throw new Error('worker-thread.ts runs as a worker thread');
const port = parentPort;
const start = workerData as WorkerStart;
const events = new WorkerEventBatch(port);
shareConnectionNumbers(start.connectionNumbers);
const config = start.config;
const site = buildSite(config.http, undefined, { memory: start.memory, slice: start.slice });
const targets = resolveProxyTargets(site, config.http.upstreams);
const upstreams = new UpstreamSet(
  targets.groups,
  { clock: systemClock },
  { memory: start.upstreamMemory, holder: start.slice + 1 },
);
const errorLog = new ErrorLog((line) => events.push({ kind: 'error-log', line }), start.errorLogLevel);
const stopFaultReports = reportFaults(errorLog, (callback) =>
  events.push({ kind: 'data-path-fault', callback }),
);

const admissions = new RemoteAdmissions((request) => events.push({ kind: 'admission', request }));
const tlsSessions = new RemoteTlsSessions(events);

/** Routed requests since the last report. */
let routed = new RequestCounts();
const listeners = new Listeners({
  config: () => config,
  site: () => site,
  targets: () => targets,
  upstreams: () => upstreams,
  clock: systemClock,
  errorLog,
  host: start.host,
  portMap: start.portMap,
  reusePort: true,
  ticketKeySeed: start.ticketKeySeed,
  tlsSessions: (configuredPort) => tlsSessions.forPort(configuredPort),
  admissions,
  countRequest: (server, location) => routed.count(server, location),
  onCompleted: start.reportCompleted
    ? (req, facts) => events.push({ kind: 'completed', req: loggedRequest(req), facts })
    : undefined,
  onClientClosed: (phase) => events.push({ kind: 'client-closed', phase }),
  log: (level, message, fields) => events.push({ kind: 'log', level, message, fields }),
});

function report(): void {
  if (routed.size > 0) {
    events.push({ kind: 'requests', counts: [...routed.entries()] });
    routed = new RequestCounts();
  }
  // the config's upstream blocks (implicit `proxy_pass host:port` groups left out, as Replica does)
  const named = config.http.upstreams.flatMap((u) => upstreams.get(u.name)?.info() ?? []);
  events.push({ kind: 'upstreams', upstreams: named });
}

const reporting = setInterval(report, start.reportIntervalMs);

async function stop(drainMs: number): Promise<void> {
  clearInterval(reporting);
  await listeners.stop(drainMs);
  await upstreams.close();
  stopFaultReports();
  report();
  events.flush();
  port.close();
}

port.on('message', (command: WorkerCommand) => {
  if (command.kind === 'stop') void stop(command.drainMs);
  else if (command.kind === 'tls-session') tlsSessions.answer(command.ask, command.data);
  else admissions.answer(command.answer);
});

try {
  await listeners.start();
  events.push({ kind: 'listening', ports: [...listeners.ports], addresses: listeners.addresses() });
} catch (err) {
  const code = (err as { code?: unknown }).code;
  events.push({
    kind: 'failed',
    message: String((err as Error).message ?? err),
    code: typeof code === 'string' ? code : undefined,
  });
  clearInterval(reporting);
  stopFaultReports();
  await upstreams.close();
  events.flush();
  port.close();
}
