/** The port of a listening server, for URLs and logs. */
import type net from 'node:net';

/** The port a listening server (HTTP or plain TCP) is bound to; 0 when it is not listening. */
export function listeningPort(server: net.Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}
