/** Loopback ports for servers the tests and benchmarks start. */
import net from 'node:net';
import { listeningPort } from '../../platform/net/listening-port';

/** Starts `server` listening on a port of 127.0.0.1 the system picks; resolves to that port. */
export async function listenOnLoopback(server: net.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return listeningPort(server);
}

/** A free loopback port for a process started next (bind to 0, read the port, release it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
