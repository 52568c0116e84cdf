/**
 * nginx and a `limitswitch replica` process on the same `http {}` body, for differential tests: the
 * body is given the port each listens on and a directory of each one's own (for `listen unix:`
 * sockets, which two servers cannot share), both start together and stop together.
 */
import { mkdirSync } from 'node:fs';
import { freePort } from './free-port.ts';
import { type ReplicaRun, startReplica, TempDir } from './limitswitch-process.ts';
import { type RunningNginx, startNginx } from './nginx.ts';

export interface SideBySide {
  readonly nginxPort: number;
  readonly replicaPort: number;
  /** The directory each body was given (`socketDir`). */
  readonly nginxDir: string;
  readonly replicaDir: string;
  /** The two servers, for their logs. */
  readonly nginx: RunningNginx;
  readonly replica: ReplicaRun;
  stop(): Promise<void>;
}

export interface SideBySideOptions {
  /** More arguments for `limitswitch replica` (e.g. `--error-log-level info`). */
  readonly replicaArgs?: readonly string[];
}

export async function startSideBySide(
  body: (port: number, socketDir: string) => string,
  options: SideBySideOptions = {},
): Promise<SideBySide> {
  const dir = new TempDir();
  const replicaDir = dir.file('replica');
  mkdirSync(replicaDir);
  // a directory per port nginx tries: a start that failed may leave its sockets behind
  let nginxDir = '';
  const nginxBody = (nginxPort: number): string => {
    nginxDir = dir.file(`nginx-${nginxPort}`);
    mkdirSync(nginxDir, { recursive: true });
    return body(nginxPort, nginxDir);
  };
  const [nginx, replica] = await Promise.allSettled([
    startNginx({ http: nginxBody }),
    startReplicaOnFreePort(dir, (port) => body(port, replicaDir), options.replicaArgs ?? []),
  ]);
  if (nginx.status === 'rejected' || replica.status === 'rejected') {
    // the one that started is stopped: a server left running would keep the test's process alive
    await Promise.all([
      nginx.status === 'fulfilled' ? nginx.value.stop() : null,
      replica.status === 'fulfilled' ? replica.value.run.process.stop() : null,
    ]);
    dir.remove();
    throw nginx.status === 'rejected' ? nginx.reason : (replica as PromiseRejectedResult).reason;
  }
  const { run, port } = replica.value;
  return {
    nginxPort: nginx.value.port,
    replicaPort: run.ports[String(port)]!,
    nginxDir,
    replicaDir,
    nginx: nginx.value,
    replica: run,
    stop: async () => {
      await Promise.all([nginx.value.stop(), run.process.stop()]);
      dir.remove();
    },
  };
}

/**
 * The replica on a port found free — again on another one when something took it before the replica
 * bound it (nginx, starting beside it, looks for a free port at the same moment).
 */
async function startReplicaOnFreePort(
  dir: TempDir,
  http: (port: number) => string,
  args: readonly string[],
): Promise<{ run: ReplicaRun; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${http(port)}\n}\n`);
    try {
      return { run: await startReplica(config, args, { status: false }), port };
    } catch (err) {
      const tookPort = err instanceof Error && err.message.includes(`:${port} failed`);
      if (!tookPort || attempt === 3) throw err;
    }
  }
}
