/**
 * The benchmark's HTTP client: one undici Pool (keep-alive connections, no pipelining) to the API,
 * sized to the load's concurrency so that no request waits for a connection.
 */
import { Pool } from 'undici';

export interface ApiClient {
  /** POST /v1/workflows/{id}/trigger; resolves with the execution id, rejects on anything but 202. */
  trigger(workflowId: string, body: unknown): Promise<string>;
  close(): Promise<void>;
}

export function createApiClient(baseUrl: string, apiKey: string, connections: number): ApiClient {
  const pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  return {
    async trigger(workflowId, body) {
      const response = await pool.request({
        method: 'POST',
        path: `/v1/workflows/${encodeURIComponent(workflowId)}/trigger`,
        headers,
        body: JSON.stringify(body),
      });
      const text = await response.body.text();
      if (response.statusCode !== 202) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
      return (JSON.parse(text) as { execution_id: string }).execution_id;
    },
    close: () => pool.close(),
  };
}
