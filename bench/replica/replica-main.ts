/**
 * One whole replica (the `Replica` a `limitswitch replica` runs, on an in-memory store), for the
 * two-worker phase: `node --import tsx bench/replica/replica-main.ts <workers> <upstreamPort> [keepalive]`.
 * Its configuration is proxy-main.ts's `engine` one (a keyval switch, on for `/`, feeds a map that
 * keys `limit_req` at a rate nothing reaches) under `worker_processes <workers>`: with 1 the replica
 * serves on its main thread; with more, from that many worker threads listening with SO_REUSEPORT on
 * the main thread's zones. `keepalive`: the upstream block's (64, with `keepalive_requests 1000000`),
 * or `none`. Reports `{ port, workers, workerTids }` to the parent over IPC (the worker threads
 * serving, 1 when the main thread serves, and their thread ids), and answers `'counters'` with the
 * limit_req zone's `{ passed, rejected }` (summed over the threads).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadConfigText } from '../../src/config/index.ts';
import { Replica } from '../../src/replica/replica.ts';
import { openStore } from '../../src/store/open-store.ts';

/** This process's threads named `name` (Node names its worker threads `WorkerThread`). */
const threadsNamed = (name: string): number[] =>
  readdirSync('/proc/self/task')
    .map(Number)
    .filter((tid) => {
      try {
        return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    });

const [workersText = '1', upstreamPortText = '', keepaliveText = '64'] = process.argv.slice(2);
const keepalive =
  keepaliveText === 'none' ? '' : ` keepalive ${Number(keepaliveText)}; keepalive_requests 1000000;`;

const config = `worker_processes ${Number(workersText)};
events {}
http {
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    limit_req_zone $limit_key zone=req_zone_10:10m rate=1000000r/s;
    upstream backend { server 127.0.0.1:${Number(upstreamPortText)};${keepalive} }
    server {
      listen 80;
      server_name cafe.example.com;
      location / { limit_req zone=req_zone_10 burst=1000000 nodelay; proxy_pass http://backend; }
    }
}
`;

const store = openStore();
// the switch is on from the start: the replica loads it from the store before it serves
await store.keyvals.set('limitreq_uri', '/', { value: '1', expireAtMs: null });
const replica = new Replica({
  id: 'bench',
  config: loadConfigText(config, 'bench-replica.conf'),
  store,
  host: '127.0.0.1',
  portMap: new Map([[80, 0]]),
  log: (level, message) => {
    if (level !== 'info') process.stderr.write(`replica ${level}: ${message}\n`);
  },
});
const threadsBefore = threadsNamed('WorkerThread');
await replica.start();
// a thread that lives only while the workers start (seen once, under load) is not one of them
await new Promise((resolve) => setTimeout(resolve, 500));
/** The worker threads the replica started (a module loader's thread, if any, was there before). */
const workerTids = threadsNamed('WorkerThread').filter((tid) => !threadsBefore.includes(tid));
process.on('message', (message: unknown) => {
  if (message !== 'counters') return;
  const { passed, rejected } = replica.site.limitReqZones.get('req_zone_10')!.counters;
  process.send?.({ passed, rejected });
});
process.on('disconnect', () => {
  void replica.close().finally(() => process.exit(0));
});
process.send?.({
  port: replica.ports.get(80),
  workers: replica.workerPool?.workers.length ?? 1,
  workerTids,
});
