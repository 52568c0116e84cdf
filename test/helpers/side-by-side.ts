/**
 * nginx and a `limitswitch replica` process on the same `http {}` body, for differential tests: the
 * body is given the port each listens on, both start together and stop together.
 */
import { freePort } from './free-port.ts';
import { type ReplicaRun, startReplica, TempDir } from './limitswitch-process.ts';
import { type RunningNginx, startNginx } from './nginx.ts';

export interface SideBySide {
  readonly nginxPort: number;
  readonly replicaPort: number;
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
  body: (port: number) => string,
  options: SideBySideOptions = {},
): Promise<SideBySide> {
  const dir = new TempDir();
  const port = await freePort();
  const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(port)}\n}\n`);
  const [nginx, replica] = await Promise.all([
    startNginx({ http: body }),
    startReplica(config, options.replicaArgs ?? [], { status: false }),
  ]);
  return {
    nginxPort: nginx.port,
    replicaPort: replica.ports[String(port)]!,
    nginx,
    replica,
    stop: async () => {
      await Promise.all([nginx.stop(), replica.process.stop()]);
      dir.remove();
    },
  };
}
