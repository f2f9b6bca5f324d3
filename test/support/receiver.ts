/**
 * A local HTTP server standing in for third parties (CRMs, webhook receivers): records every request
 * and answers what the test scripts, one reply per request or a default.
 */
import http from 'node:http';
import { listeningPort } from '../../platform/net/listening-port';
import { listenOnLoopback } from './ports';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Header names and values as received, in pairs (`headers` cannot hold a header named `__proto__`). */
  rawHeaders: string[];
  body: string;
  json: unknown;
  at: number;
  /** The status this receiver answered (undefined until it has, or when the client went away first). */
  answered?: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Hold the answer until this promise settles. */
  until?: Promise<unknown>;
}

export type Responder = (request: ReceivedRequest) => Reply | Promise<Reply>;

export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  /** Paths of requests whose client went away before the answer. */
  readonly abortedPaths: string[] = [];
  private readonly queue: Responder[] = [];
  private readonly pathQueues = new Map<string, Responder[]>();
  private fallback: Responder = () => ({ status: 200, body: { ok: true } });
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await listenOnLoopback(receiver.server);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${listeningPort(this.server)}`;
  }

  /** Answers the next requests in order with these replies, then falls back to the default. */
  replyOnce(...replies: (Reply | Responder)[]): this {
    for (const reply of replies) this.queue.push(typeof reply === 'function' ? reply : () => reply);
    return this;
  }

  /** Answers the next requests to this path in order with these replies (before the general queue). */
  replyOnceTo(path: string, ...replies: (Reply | Responder)[]): this {
    const queue = this.pathQueues.get(path) ?? [];
    for (const reply of replies) queue.push(typeof reply === 'function' ? reply : () => reply);
    this.pathQueues.set(path, queue);
    return this;
  }

  replyAlways(reply: Reply | Responder): this {
    this.fallback = typeof reply === 'function' ? reply : () => reply;
    return this;
  }

  requestsTo(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const request: ReceivedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
      json,
      at: Date.now(),
    };
    this.requests.push(request);
    const reply = await (this.pathQueues.get(request.path)?.shift() ?? this.queue.shift() ?? this.fallback)(
      request,
    );
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.until) {
      const aborted = new Promise<void>((resolve) => res.once('close', () => resolve()));
      await Promise.race([reply.until.catch(() => undefined), aborted]);
      if (!res.writableEnded && res.destroyed) this.abortedPaths.push(request.path);
    }
    if (res.destroyed) return;
    const payload =
      reply.body === undefined
        ? ''
        : typeof reply.body === 'string'
          ? reply.body
          : JSON.stringify(reply.body);
    res.writeHead(reply.status ?? 200, {
      ...(typeof reply.body === 'object' ? { 'content-type': 'application/json' } : {}),
      ...reply.headers,
    });
    res.end(payload);
    request.answered = reply.status ?? 200;
  }
}
