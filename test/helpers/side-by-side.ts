/**
 * nginx and a `limitswitch replica` process on the same `http {}` body, for differential tests: the
 * body is given the port each listens on, both start together and stop together.
 */
import { freePort } from './free-port.ts';
import { startReplica, TempDir } from './limitswitch-process.ts';
import { startNginx } from './nginx.ts';

export interface SideBySide {
  readonly nginxPort: number;
  readonly replicaPort: number;
  stop(): Promise<void>;
}

export async function startSideBySide(body: (port: number) => string): Promise<SideBySide> {
  const dir = new TempDir();
  const port = await freePort();
  const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(port)}\n}\n`);
  const [nginx, replica] = await Promise.all([
    startNginx({ http: body }),
    startReplica(config, [], { status: false }),
  ]);
  return {
    nginxPort: nginx.port,
    replicaPort: replica.ports[String(port)]!,
    stop: async () => {
      await Promise.all([nginx.stop(), replica.process.stop()]);
      dir.remove();
    },
  };
}
