/**
 * The benchmark's HTTP client: one undici Pool (keep-alive connections, no pipelining) to the API,
 * sized to the load's concurrency so that no request waits for a connection.
 */
import { Pool } from 'undici';

export interface ApiClient {
  /** POST /v1/workflows/{id}/trigger; resolves with the execution id, rejects on anything but 202. */
  trigger(workflowId: string, body: unknown): Promise<string>;
  /** POST /v1/workflows (version 1 of a new workflow); rejects on anything but 201. */
  createWorkflow(definition: unknown): Promise<void>;
  /** GET /v1/executions/{id}; resolves with the body as received (not parsed), rejects on anything but 200. */
  getExecution(executionId: string): Promise<string>;
  /** GET of any path under the API; resolves with the body as received, rejects on anything but 200. */
  get(path: string): Promise<string>;
  /** POST /v1/webhooks; resolves with the endpoint's id and its whsec_ secret, rejects on anything but 201. */
  createWebhook(endpoint: { url: string; events: string[]; description?: string }): Promise<CreatedWebhook>;
  /** POST /v1/events (one event or an array); resolves with the accepted ids, rejects on anything but 202. */
  sendEvents(body: unknown): Promise<string[]>;
  close(): Promise<void>;
}

export interface CreatedWebhook {
  id: string;
  url: string;
  /** The whsec_ signing secret, shown only in the 201 answer. */
  secret: string;
}

export function createApiClient(baseUrl: string, apiKey: string, connections: number): ApiClient {
  const pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const authorization = `Bearer ${apiKey}`;
  const send = async (method: 'GET' | 'POST', path: string, expected: number, body?: unknown) => {
    const response = await pool.request({
      method,
      path,
      headers: body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    if (response.statusCode !== expected)
      throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    return text;
  };
  return {
    async trigger(workflowId, body) {
      const text = await send('POST', `/v1/workflows/${encodeURIComponent(workflowId)}/trigger`, 202, body);
      return (JSON.parse(text) as { execution_id: string }).execution_id;
    },
    async createWorkflow(definition) {
      await send('POST', '/v1/workflows', 201, definition);
    },
    getExecution: (executionId) => send('GET', `/v1/executions/${encodeURIComponent(executionId)}`, 200),
    get: (path) => send('GET', path, 200),
    async createWebhook(endpoint) {
      return JSON.parse(await send('POST', '/v1/webhooks', 201, endpoint)) as CreatedWebhook;
    },
    async sendEvents(body) {
      return (JSON.parse(await send('POST', '/v1/events', 202, body)) as { ids: string[] }).ids;
    },
    close: () => pool.close(),
  };
}
