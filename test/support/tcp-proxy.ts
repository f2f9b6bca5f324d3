/**
 * A loopback TCP proxy that a test can cut and restore, to take a dependency away from a running service,
 * or whose answers it can hold back for a while, to make a dependency answer late.
 */
import net from 'node:net';
import { listeningPort } from '../../platform/net/listening-port';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** The connections to the target, whose bytes flow back to the clients unless held. */
  private readonly upstreams = new Map<net.Socket, net.Socket>();
  private holding = false;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }, port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(port, target);
    await proxy.listen();
    return proxy;
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      this.upstreams.set(upstream, client);
      upstream.on('close', () => this.upstreams.delete(upstream));
      client.pipe(upstream);
      if (this.holding) upstream.pause();
      else upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    (this as { port: number }).port = listeningPort(server);
    this.server = server;
  }

  /** Refuses new connections and breaks the open ones. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Holds back what the target sends (requests still reach it) until `release`. */
  hold(): void {
    this.holding = true;
    for (const [upstream, client] of this.upstreams) {
      upstream.unpipe(client);
      upstream.pause();
    }
  }

  /** Lets what the target sent since `hold` through, and what it sends from now on. */
  release(): void {
    this.holding = false;
    for (const [upstream, client] of this.upstreams) upstream.pipe(client);
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    await this.listen();
  }
}
