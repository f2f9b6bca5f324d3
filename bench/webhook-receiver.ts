/**
 * The receiver of the webhooks scenario: a local HTTP server that answers every request at once with
 * 204, then records it: when its body had arrived, to which path, the payload's ids, whether it carried
 * the three Standard Webhooks headers, and whether the independent `standardwebhooks` package accepts
 * its signature with the secret registered for that path (checked after answering, at receipt, well
 * within the package's five-minute timestamp tolerance).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { listenOnLoopback } from '../test/support/ports';

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

export interface ReceivedWebhook {
  path: string;
  /** Date.now() when the body had arrived: comparable with Temporal's close times (same host, same clock). */
  receivedAt: number;
  /** performance.now() at the same moment, for wall times measured in this process. */
  receivedPerf: number;
  /** The webhook-id header. */
  webhookId: string | undefined;
  /** The payload's id, event and execution_id. */
  eventId: string | undefined;
  event: string | undefined;
  executionId: string | undefined;
  /** webhook-id, webhook-timestamp and webhook-signature were all there. */
  headersPresent: boolean;
  /** Whether `standardwebhooks` verified it; null when no secret was registered for the path. */
  signatureValid: boolean | null;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:PORT (a private destination: the service needs ALLOW_PRIVATE_DESTINATIONS). */
  url: string;
  /** Verifies the requests to `path` with this endpoint secret (whsec_...). */
  setSecret(path: string, secret: string): void;
  /** Every request so far, in arrival order. */
  received(): readonly ReceivedWebhook[];
  /** The first request about `executionId` to `path`, received already or still to come; rejects after `timeoutMs`. */
  waitForExecution(path: string, executionId: string, timeoutMs: number): Promise<ReceivedWebhook>;
  stop(): Promise<void>;
}

function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parsePayload(body: string): { id?: string; event?: string; execution_id?: string } {
  try {
    const parsed = JSON.parse(body) as unknown;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const verifiers = new Map<string, Webhook>();
  const firstByExecution = new Map<string, ReceivedWebhook>();
  const waiters = new Map<string, ((request: ReceivedWebhook) => void)[]>();
  const keyOf = (path: string, executionId: string) => `${path} ${executionId}`;

  const record = (req: http.IncomingMessage, body: string) => {
    const path = req.url ?? '/';
    const payload = parsePayload(body);
    const headers = Object.fromEntries(SIGNATURE_HEADERS.map((name) => [name, headerOf(req, name) ?? '']));
    const headersPresent = SIGNATURE_HEADERS.every((name) => headers[name] !== '');
    const verifier = verifiers.get(path);
    let signatureValid: boolean | null = null;
    if (verifier) {
      try {
        verifier.verify(body, headers);
        signatureValid = true;
      } catch {
        signatureValid = false;
      }
    }
    return {
      path,
      webhookId: headers['webhook-id'] || undefined,
      eventId: typeof payload.id === 'string' ? payload.id : undefined,
      event: typeof payload.event === 'string' ? payload.event : undefined,
      executionId: typeof payload.execution_id === 'string' ? payload.execution_id : undefined,
      headersPresent,
      signatureValid,
    };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = Date.now();
      const receivedPerf = performance.now();
      res.sendDate = false;
      res.writeHead(204);
      res.end();
      const request: ReceivedWebhook = {
        receivedAt,
        receivedPerf,
        ...record(req, Buffer.concat(chunks).toString('utf8')),
      };
      received.push(request);
      if (request.executionId === undefined) return;
      const key = keyOf(request.path, request.executionId);
      if (firstByExecution.has(key)) return;
      firstByExecution.set(key, request);
      for (const resolve of waiters.get(key) ?? []) resolve(request);
      waiters.delete(key);
    });
  });
  // The delivery activity keeps its connections open between deliveries: do not close them under it.
  server.keepAliveTimeout = 60_000;
  const port = await listenOnLoopback(server);

  return {
    url: `http://127.0.0.1:${port}`,
    setSecret: (path, secret) => verifiers.set(path, new Webhook(secret)),
    received: () => received,
    waitForExecution: (path, executionId, timeoutMs) => {
      const key = keyOf(path, executionId);
      const already = firstByExecution.get(key);
      if (already) return Promise.resolve(already);
      return new Promise<ReceivedWebhook>((resolve, reject) => {
        const timer = setTimeout(() => {
          const list = waiters.get(key) ?? [];
          const remaining = list.filter((waiter) => waiter !== done);
          if (remaining.length > 0) waiters.set(key, remaining);
          else waiters.delete(key);
          reject(new Error(`no delivery for ${executionId} to ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = (request: ReceivedWebhook) => {
          clearTimeout(timer);
          resolve(request);
        };
        waiters.set(key, [...(waiters.get(key) ?? []), done]);
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
