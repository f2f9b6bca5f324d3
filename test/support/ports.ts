/** Loopback ports for servers the tests and benchmarks start. */
import fs from 'node:fs';
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

/** The lowest port of the range freePort picks from. */
const FIRST_LISTENER_PORT = 15_000;

/**
 * The ports below the system's ephemeral range (`ip_local_port_range`), from FIRST_LISTENER_PORT: the
 * system never gives them to an outgoing connection as its local port. A port bound to 0 comes from the
 * ephemeral range, and between its release and the next process's listen, any of the suite's outgoing
 * connections could take it (an API that then exits with EADDRINUSE). Undefined where the range is unknown.
 */
function listenerRange(): { first: number; count: number } | undefined {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const count = Number(low) - FIRST_LISTENER_PORT;
    return Number.isInteger(count) && count >= 1000 ? { first: FIRST_LISTENER_PORT, count } : undefined;
  } catch {
    return undefined;
  }
}

const range = listenerRange();
/** Ports this process handed out: a process that has not bound its port yet must not get a twin. */
const handedOut = new Set<number>();

async function bindsOnLoopback(port: number): Promise<boolean> {
  const server = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/**
 * A free loopback port for a process started next: a random one below the ephemeral range that binds now
 * (see listenerRange), never one this process handed out before; where that range is unknown, one the
 * system picks (bind to 0, read the port, release it).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; range && attempt < 100; attempt++) {
    const port = range.first + Math.floor(Math.random() * range.count);
    if (handedOut.has(port) || !(await bindsOnLoopback(port))) continue;
    handedOut.add(port);
    return port;
  }
  const server = net.createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
