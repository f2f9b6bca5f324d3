/**
 * A guard for tests that let a fuzzer choose the service's outbound destinations (webhook URLs, connector
 * steps): while installed, every TCP connection this process opens must go to a loopback address, so a
 * generated `https://203.0.113.9/` or `https://example.org/` never leaves the machine (no DNS query
 * either). Other destinations fail as an unreachable host would, which the service handles like any
 * network error (a retried step, a failed delivery attempt).
 */
import net from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (LOOPBACK_NAMES.has(bare.toLowerCase())) return true;
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  if (net.isIPv6(bare)) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

/** Where a `socket.connect(...)` call goes: a host (undefined for a Unix socket or pipe path). */
function destinationOf(args: unknown[]): string | undefined {
  // net.connect passes its already-normalized arguments ([options, callback]) as one array.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: string; path?: string };
    if (options.path !== undefined) return undefined;
    return options.host ?? 'localhost';
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return undefined;
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;

function setConnect(connect: Connect): void {
  Object.defineProperty(net.Socket.prototype, 'connect', {
    value: connect,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** Installs the guard; returns the function that removes it. */
export function allowLoopbackOnly(onRefused: (host: string) => void = () => undefined): () => void {
  const original = Object.getOwnPropertyDescriptor(net.Socket.prototype, 'connect')!.value as Connect;
  const guarded: Connect = function (...args) {
    const host = destinationOf(args);
    if (host !== undefined && !isLoopback(host)) {
      onRefused(host);
      const error = Object.assign(
        new Error(`connect EHOSTUNREACH ${host} (this test allows loopback only)`),
        {
          code: 'EHOSTUNREACH',
          syscall: 'connect',
        },
      );
      process.nextTick(() => this.destroy(error));
      return this;
    }
    return original.apply(this, args);
  };
  setConnect(guarded);
  return () => {
    if (Object.getOwnPropertyDescriptor(net.Socket.prototype, 'connect')?.value === guarded)
      setConnect(original);
  };
}
