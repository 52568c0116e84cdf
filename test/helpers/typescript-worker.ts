/**
 * A worker thread running a TypeScript module of the tests: Node.js 22.18+ and 24 load it as it is;
 * Node.js 20 through tsx, registered in the thread first (as bin/limitswitch.js does), since a
 * thread does not inherit the loader hooks `--import tsx` gave the test's own thread.
 */
import { Worker } from 'node:worker_threads';

export function startTypeScriptWorker(module: URL, workerData: unknown): Worker {
  const boot = `
    const typescript = process.features.typescript !== undefined
      ? Promise.resolve()
      : import('tsx/esm/api').then(({ register }) => register());
    typescript.then(() => import(${JSON.stringify(module.href)}));
  `;
  return new Worker(boot, { eval: true, workerData });
}
