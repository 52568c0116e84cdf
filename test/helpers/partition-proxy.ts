/**
 * A TCP proxy in front of a server that can be cut like a network partition: while cut, nothing
 * passes either way (bytes already sent wait, as TCP retransmits them, and new connections are taken
 * but not carried through); healed, what waited is delivered and traffic flows again. Exchanges a
 * client gave up on during the cut still reach the server when it heals — as they do on a real
 * network.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

interface Link {
  readonly client: Socket;
  server: Socket | null;
  /** Bytes held while cut, per direction. */
  readonly toServer: Buffer[];
  readonly toClient: Buffer[];
}

export class PartitionProxy {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #links = new Set<Link>();
  #cut = false;

  private constructor(server: Server, target: { host: string; port: number }) {
    this.#server = server;
    this.#target = target;
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<PartitionProxy> {
    const server = createServer();
    const proxy = new PartitionProxy(server, { host: targetHost, port: targetPort });
    server.on('connection', (client) => proxy.#accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  cut(): void {
    this.#cut = true;
  }

  heal(): void {
    this.#cut = false;
    for (const link of this.#links) this.#flow(link);
  }

  async close(): Promise<void> {
    for (const link of this.#links) {
      link.client.destroy();
      link.server?.destroy();
    }
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    const link: Link = { client, server: null, toServer: [], toClient: [] };
    this.#links.add(link);
    const end = () => {
      this.#links.delete(link);
      client.destroy();
      link.server?.destroy();
    };
    client.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      link.toServer.push(chunk);
      this.#flow(link);
    });
    this.#flow(link);
  }

  /** Connects (once not cut) and delivers what waited. */
  #flow(link: Link): void {
    if (this.#cut) return;
    if (link.server === null) {
      const server = connect(this.#target.port, this.#target.host);
      link.server = server;
      const end = () => {
        this.#links.delete(link);
        link.client.destroy();
        server.destroy();
      };
      server.on('error', end).on('close', end);
      server.on('data', (chunk: Buffer) => {
        link.toClient.push(chunk);
        this.#flow(link);
      });
    }
    for (const chunk of link.toServer.splice(0)) link.server.write(chunk);
    for (const chunk of link.toClient.splice(0)) link.client.write(chunk);
  }
}
