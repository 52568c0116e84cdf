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
  const port = await freePort();
  const replicaDir = dir.file('replica');
  mkdirSync(replicaDir);
  // a directory per port nginx tries: a start that failed may leave its sockets behind
  let nginxDir = '';
  const nginxBody = (nginxPort: number): string => {
    nginxDir = dir.file(`nginx-${nginxPort}`);
    mkdirSync(nginxDir, { recursive: true });
    return body(nginxPort, nginxDir);
  };
  const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(port, replicaDir)}\n}\n`);
  const [nginx, replica] = await Promise.all([
    startNginx({ http: nginxBody }),
    startReplica(config, options.replicaArgs ?? [], { status: false }),
  ]);
  return {
    nginxPort: nginx.port,
    replicaPort: replica.ports[String(port)]!,
    nginxDir,
    replicaDir,
    nginx,
    replica,
    stop: async () => {
      await Promise.all([nginx.stop(), replica.process.stop()]);
      dir.remove();
    },
  };
}
