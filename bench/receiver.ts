/**
 * The third parties that connector steps call in the benchmark. startReceiver: a local HTTP server that
 * answers every request at once with 200 and a small JSON body. The answer depends on the request only (no Date
 * header, an id derived from the request body), so two runs with the same input record the same step
 * inputs and outputs, whichever workflow made the calls. startSlowReceiver: one that answers after a fixed delay.
 */
import http from 'node:http';
import { listenOnLoopback } from '../test/support/ports';

export interface BenchReceiver {
  /** http://127.0.0.1:PORT (a private destination: the service needs ALLOW_PRIVATE_DESTINATIONS). */
  url: string;
  /** Requests answered so far. */
  requests(): number;
  stop(): Promise<void>;
}

/** JSON with object keys sorted, so that the same content gives the same id whatever its key order. */
function canonicalJson(text: string): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
          )
        : value;
  try {
    return JSON.stringify(sorted(JSON.parse(text)));
  } catch {
    return text;
  }
}

/** FNV-1a of the request body's content: a stable "account id" for the answer. */
function accountId(body: string): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(canonicalJson(body))) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return `acct-${hash.toString(16).padStart(8, '0')}`;
}

export async function startReceiver(): Promise<BenchReceiver> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      const payload = JSON.stringify({
        ok: true,
        id: accountId(Buffer.concat(chunks).toString('utf8')),
        path: req.url,
      });
      res.sendDate = false;
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      });
      res.end(payload);
    });
  });
  // The connector keeps its connections open between steps: do not close them under it.
  server.keepAliveTimeout = 60_000;
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A third party that answers every request after `delayMs`; counts the answers. */
export async function startSlowReceiver(delayMs: number) {
  let answered = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        answered += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }, delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.maxConnections = 100_000;
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/slow`,
    answered: () => answered,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
