/**
 * The onboard flow's third party: answers every POST at once with 200, and notes when each customer's
 * request arrived (the end of trigger → receiver latency) and how many times (duplicates).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback } from '../../test/support/ports';

export interface OnboardReceiver {
  url: string;
  /** performance.now() of each customer's first request. */
  arrivals: Map<string, number>;
  /** Requests per customer. */
  hits: Map<string, number>;
  requests(): number;
  stop(): Promise<void>;
}

export async function startOnboardReceiver(): Promise<OnboardReceiver> {
  const arrivals = new Map<string, number>();
  const hits = new Map<string, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      requests += 1;
      let name: string | undefined;
      try {
        name = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name?: string }).name;
      } catch {
        // not ours
      }
      if (name !== undefined) {
        if (!arrivals.has(name)) arrivals.set(name, at);
        hits.set(name, (hits.get(name) ?? 0) + 1);
      }
      res.sendDate = false;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11 });
      res.end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 60_000;
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    hits,
    requests: () => requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
