/**
 * A local stand-in for an OpenAI-compatible provider (POST {base}/chat/completions), for tests and for
 * trying AI steps offline: `npm run fake-ai` serves it on 127.0.0.1:4010, base URL http://127.0.0.1:4010/v1.
 *
 * By default it answers like a model would: text derived from the prompt, or, when asked for JSON with a
 * schema, an object filled from the schema. Tests queue exact replies and read the recorded requests.
 */
import http from 'node:http';
import { listeningPort } from '../platform/net/listening-port';

export interface ChatRequest {
  headers: http.IncomingHttpHeaders;
  body: {
    model?: string;
    messages?: { role: string; content: string }[];
    temperature?: number;
    max_tokens?: number;
    response_format?: { type: string; json_schema?: { name: string; schema: Record<string, unknown> } };
  };
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** A full response body; when absent, `content` is wrapped in a chat.completion. */
  body?: unknown;
  content?: string;
}

export class FakeAiProvider {
  readonly requests: ChatRequest[] = [];
  private readonly queue: FakeReply[] = [];
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  static async start(port = 0, host = '127.0.0.1'): Promise<FakeAiProvider> {
    const provider = new FakeAiProvider();
    await new Promise<void>((resolve) => provider.server.listen(port, host, resolve));
    return provider;
  }

  /** The base URL to configure as AI_BASE_URL. */
  get baseUrl(): string {
    return `http://127.0.0.1:${listeningPort(this.server)}/v1`;
  }

  replyOnce(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `No route ${req.method} ${req.url}` } }));
      return;
    }
    let body: ChatRequest['body'];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'];
    } catch {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'invalid JSON' } }));
      return;
    }
    this.requests.push({ headers: req.headers, body });
    const reply = this.queue.shift() ?? { content: defaultAnswer(body) };
    const payload = reply.body ?? completion(body.model ?? 'fake-model', reply.content ?? '');
    res
      .writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
      .end(JSON.stringify(payload));
  }
}

export function completion(model: string, content: string) {
  return {
    id: `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
  };
}

function defaultAnswer(body: ChatRequest['body']): string {
  const schema = body.response_format?.json_schema?.schema;
  if (schema) return JSON.stringify(exampleOf(schema));
  const prompt = body.messages?.filter((m) => m.role === 'user').pop()?.content ?? '';
  return `(fake model) ${prompt.slice(0, 200)}`;
}

/** A value satisfying simple schemas: objects with required properties, strings, numbers, booleans, arrays, enums. */
function exampleOf(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  switch (schema['type']) {
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, exampleOf(property)]),
      );
    }
    case 'array':
      return [];
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'example';
  }
}

if (require.main === module) {
  const port = Number(process.env['FAKE_AI_PORT'] ?? 4010);
  void FakeAiProvider.start(port).then((provider) => {
    process.stdout.write(
      `Fake AI provider on ${provider.baseUrl} (set AI_BASE_URL=${provider.baseUrl} AI_MODEL=fake-model)\n`,
    );
  });
}
