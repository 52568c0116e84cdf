/**
 * A TCP listener whose accept queue is full, so the kernel drops every further SYN and a connect to it
 * hangs until the client gives up: a black-holed server, made locally. (No address is known to drop
 * SYNs on every machine the tests run on: an unroutable one fails at once without a route, or goes out
 * to a real network with one.)
 *
 * The listening socket lives in a worker thread that blocks right after `listen` (Atomics.wait), so its
 * event loop never accepts. With `backlog: 1` Linux queues two completed handshakes; two filler
 * connections take them.
 */
import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

export interface FullBacklogListener {
  readonly port: number;
  close(): Promise<void>;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const server = require('node:net').createServer();
server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  parentPort.postMessage(server.address().port);
  Atomics.wait(workerData, 0, 0);
  server.close();
});
`;

const FILLERS = 2;

export async function startFullBacklogListener(): Promise<FullBacklogListener> {
  const release = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER, { eval: true, workerData: release });
  // A listener a failed test never closed must not keep the test process alive.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const fillers: Socket[] = [];
  for (let i = 0; i < FILLERS; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    fillers.push(socket);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  }
  return {
    port,
    async close() {
      for (const socket of fillers) socket.destroy();
      worker.ref();
      Atomics.store(release, 0, 1);
      Atomics.notify(release, 0);
      await exited;
    },
  };
}
