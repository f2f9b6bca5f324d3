/**
 * The `http` connector step: one HTTP request, response `{status, headers, body}`.
 *
 * 5xx, 429 (honouring Retry-After) and network errors are retryable; other 4xx fail the step at once.
 * Destinations are checked like webhook URLs, redirects are not followed unless asked, the response
 * body is size-capped, and templates reading secrets are resolved here, inside the activity, so secret
 * values never reach Temporal history; any secret value echoed back is masked in what we return.
 */
import { finished, type Readable } from 'node:stream';
import { Context, ApplicationFailure } from '@temporalio/activity';
import { Agent, request, errors as undiciErrors, type Dispatcher } from 'undici';
import {
  checkUrlForm,
  DestinationError,
  guardedLookup,
  type DestinationPolicy,
} from '../../platform/net/destination-guard';
import {
  STEP_ERROR_CODES,
  type HttpRequestSpec,
  type HttpResponseOutput,
  type StepMeta,
} from '../../core/execution-types';
import { MAX_STEP_TIMEOUT_MS } from '../../core/definitions/schema';
import { objectFromEntries } from '../../core/user-json';
import { rethrowIfCanceled, whileHeartbeating } from './heartbeat';
import { parseRetryAfter } from './retry-after';
import { outboundSpan, withTraceContext } from '../../platform/observability/tracing';
import type { SecretResolution } from './secrets';

export interface HttpConnectorOptions {
  policy: DestinationPolicy;
  maxResponseBytes: number;
  /** Longest the response body may pause between two chunks (undici's bodyTimeout). */
  bodyIdleTimeoutMs: number;
  /** Resolves `{{ secrets.NAME }}` templates of the workspace at the given pointers of a request. */
  resolveSecrets: (workspaceId: string, value: unknown, pointers: string[]) => Promise<SecretResolution>;
}

const MAX_REDIRECTS = 5;
const ERROR_BODY_PREVIEW = 300;

export function createHttpConnector(options: HttpConnectorOptions) {
  // The step's timeout (at most 24 h: MAX_STEP_TIMEOUT_MS) ends the whole call through its signal; these
  // bound a call without one, and a body that trickles in.
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup(options.policy) },
    headersTimeout: MAX_STEP_TIMEOUT_MS,
    bodyTimeout: options.bodyIdleTimeoutMs,
  });

  /**
   * As an activity (a retry) Temporal passes the request and its meta; the step local activity also
   * passes the signal that ends the attempt (its time limit, or the run's cancellation).
   */
  return async function connector_http(
    spec: HttpRequestSpec,
    meta: StepMeta,
    signal: AbortSignal = Context.current().cancellationSignal,
  ): Promise<HttpResponseOutput> {
    const secrets = await options.resolveSecrets(meta.workspaceId, spec, meta.secretPointers);
    const resolved = secrets.value as HttpRequestSpec;
    try {
      const response = await whileHeartbeating(() =>
        send(dispatcher, options, resolved, signal, (text) => secrets.mask(text)),
      );
      return secrets.mask<HttpResponseOutput>(response);
    } catch (error) {
      rethrowIfCanceled();
      throw secrets.maskFailure(toFailure(error));
    }
  };
}

async function send(
  dispatcher: Dispatcher,
  options: HttpConnectorOptions,
  spec: HttpRequestSpec,
  signal: AbortSignal,
  /** Masks the secrets' values in what is recorded (the span's URL). */
  redact: (text: string) => string,
): Promise<HttpResponseOutput> {
  let method = spec.method.toUpperCase();
  let url = withQuery(spec.url, spec.query);
  let body = encodeBody(spec.body, spec.headers);
  // Once a redirect leaves the first origin, credentials stay behind (as browsers and curl do).
  let crossedOrigin = false;
  for (let hop = 0; ; hop++) {
    checkUrlForm(url, options.policy);
    const headers = crossedOrigin ? withoutCredentials(body.headers) : body.headers;
    const response = await outboundSpan(
      method,
      url,
      async (span) => {
        const answer = await request(url, {
          method: method,
          headers: span ? withTraceContext(headers) : headers,
          body: body.payload,
          dispatcher,
          signal,
        });
        span?.setAttribute('http.response.status_code', answer.statusCode);
        return answer;
      },
      redact,
    );
    const location = header(response.headers, 'location');
    if (
      spec.follow_redirects &&
      response.statusCode >= 300 &&
      response.statusCode < 400 &&
      location &&
      hop < MAX_REDIRECTS
    ) {
      await response.body.dump();
      const next = new URL(location, url);
      if (next.origin !== new URL(url).origin) crossedOrigin = true;
      url = next.toString();
      // Like browsers: 303, and 301/302 after a POST, continue as a GET without a body.
      if (
        response.statusCode === 303 ||
        ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = encodeBody(undefined, spec.headers);
      }
      continue;
    }
    const output: HttpResponseOutput = {
      status: response.statusCode,
      headers: flattenHeaders(response.headers),
      body: await readBody(response, options.maxResponseBytes),
    };
    classifyStatus(method, url, output);
    return output;
  }
}

function classifyStatus(method: string, url: string, output: HttpResponseOutput): void {
  const { status } = output;
  if (status < 400) return;
  const preview = typeof output.body === 'string' ? output.body : JSON.stringify(output.body ?? '');
  const message = `${method} ${redactUrl(url)} answered ${status}${preview ? `: ${preview.slice(0, ERROR_BODY_PREVIEW)}` : ''}`;
  const details = [{ status, body: output.body }];
  if (status === 429 || status >= 500) {
    const retryAfter = parseRetryAfter(output.headers['retry-after']);
    throw ApplicationFailure.create({
      type: STEP_ERROR_CODES.httpStatus,
      message,
      details,
      ...(retryAfter !== undefined ? { nextRetryDelay: retryAfter } : {}),
    });
  }
  throw ApplicationFailure.create({
    type: STEP_ERROR_CODES.httpStatus,
    message,
    details,
    nonRetryable: true,
  });
}

function toFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof DestinationError) {
    return ApplicationFailure.nonRetryable(
      `Destination not allowed: ${error.message}`,
      STEP_ERROR_CODES.destination,
    );
  }
  if (error instanceof ResponseTooLargeError) {
    return ApplicationFailure.nonRetryable(error.message, STEP_ERROR_CODES.responseTooLarge);
  }
  if (error instanceof undiciErrors.BodyTimeoutError) {
    return ApplicationFailure.retryable(
      'Network error: the response body paused for longer than the connector allows (CONNECTOR_BODY_IDLE_TIMEOUT_MS).',
      STEP_ERROR_CODES.network,
    );
  }
  if (error instanceof undiciErrors.InvalidArgumentError || error instanceof TypeError) {
    return ApplicationFailure.nonRetryable(
      `Invalid request: ${error.message}`,
      STEP_ERROR_CODES.invalidRequest,
    );
  }
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof DestinationError) {
    return ApplicationFailure.nonRetryable(
      `Destination not allowed: ${cause.message}`,
      STEP_ERROR_CODES.destination,
    );
  }
  const code = (error as { code?: string }).code;
  const message = (error as Error).message ?? String(error);
  return ApplicationFailure.retryable(
    `Network error: ${code ? `${code} ` : ''}${message}`,
    STEP_ERROR_CODES.network,
  );
}

class ResponseTooLargeError extends Error {}

async function readBody(response: Dispatcher.ResponseData, maxBytes: number): Promise<unknown> {
  const body = await readAtMost(response.body, maxBytes);
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  const type = header(response.headers, 'content-type') ?? '';
  if (/\bjson\b|\+json/i.test(type)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * The stream's bytes, refused past `maxBytes` (the stream is destroyed then). Read by events into one
 * promise, where `for await` makes a few per chunk (docs/benchmarks.md#fewer-promises-per-run);
 * `finished` settles it however the stream ends (its end, an error, a close before the end).
 */
function readAtMost(stream: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new ResponseTooLargeError(`The response body is larger than ${maxBytes} bytes.`));
        stream.destroy();
        return;
      }
      chunks.push(chunk);
    });
    finished(stream, (error) => (error ? reject(error) : resolve(Buffer.concat(chunks, size))));
  });
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Header names are the remote server's: defined, never assigned (core/user-json.ts). */
function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  return objectFromEntries(
    Object.entries(headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
  );
}

function withQuery(raw: string, query: HttpRequestSpec['query']): string {
  if (!query || Object.keys(query).length === 0) return raw;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError(`"${raw}" is not a valid URL`);
  }
  for (const [name, value] of Object.entries(query)) url.searchParams.append(name, String(value));
  return url.toString();
}

function encodeBody(
  body: unknown,
  headers: Record<string, string> = {},
): { payload?: string; headers: Record<string, string> } {
  const out = { ...headers };
  if (body === undefined || body === null) return { headers: out };
  const hasType = Object.keys(out).some((name) => name.toLowerCase() === 'content-type');
  if (typeof body === 'string') {
    if (!hasType) out['content-type'] = 'text/plain; charset=utf-8';
    return { payload: body, headers: out };
  }
  if (!hasType) out['content-type'] = 'application/json';
  return { payload: JSON.stringify(body), headers: out };
}

/** URLs in error messages lose their query string and credentials: they are where tokens hide. */
function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())),
  );
}
