/**
 * The thin shell around the control-plane plugin: a fastify server that listens, and closes
 * gracefully (stops accepting, lets in-flight requests finish, then returns).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { bindError } from '../shared/bind-error.ts';
import { type ControlPlaneOptions, controlPlane, controlPlaneServerOptions } from './app.ts';

export interface ControlPlaneServerOptions extends ControlPlaneOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** A pino logger; `false`/absent: silent. */
  readonly logger?: FastifyBaseLogger | false;
}

export interface ControlPlaneServer {
  readonly app: FastifyInstance;
  /** `http://host:port` as bound (IPv6 hosts in brackets). */
  readonly url: string;
  /** Graceful: no new connections, in-flight requests finish. Does not close the store. */
  close(): Promise<void>;
}

/** The app answering the requests of a server of the caller's. */
export interface ControlPlaneHandler {
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

/**
 * The app, ready, for a server of the caller's: a replica's status port that is bound before the
 * replica has a configuration.
 */
export async function buildControlPlaneHandler(
  options: ControlPlaneOptions & { readonly logger?: FastifyBaseLogger | false },
): Promise<ControlPlaneHandler> {
  const app = Fastify({
    ...controlPlaneServerOptions(),
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    logController: quietRequests(),
  });
  await app.register(controlPlane, options);
  await app.ready();
  return { handle: (req, res) => app.routing(req, res), close: () => app.close() };
}

export async function startControlPlaneServer(
  options: ControlPlaneServerOptions,
): Promise<ControlPlaneServer> {
  const app = Fastify({
    ...controlPlaneServerOptions(),
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // One line per request, written by the app when the response is sent.
    logController: quietRequests(),
    // Idle keep-alive connections would otherwise hold close() open.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  await app.register(controlPlane, options);
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (err) {
    await app.close();
    throw bindError(options.host, options.port, err);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    app,
    url: `http://${host}:${port}`,
    close: () => app.close(),
  };
}

/** fastify's own request lines off: the app writes one line per request itself. */
function quietRequests(): LogController {
  return new LogController({ disableRequestLogging: true });
}
