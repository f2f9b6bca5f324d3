/**
 * The `ai` step: one OpenAI-compatible chat-completions call (AI_BASE_URL, AI_API_KEY, AI_MODEL or the
 * step's `model`). With `output_schema` the model is asked for JSON (response_format json_schema) and
 * its answer is validated against the schema. Provider 429 (honouring Retry-After), 5xx and network
 * errors are retryable; other 4xx are not; no provider configured fails with `ai_not_configured`; a
 * workspace over its AI token budget for the day fails with `ai_budget_exceeded` (ai-budget.ts).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { request } from 'undici';
import { SchemaError } from '../../core/definitions/input-schema';
import type { ErrorDetail } from '../../core/error-detail';
import type { SchemaValidation } from '../../platform/compute/schemas';
import {
  STEP_ERROR_CODES,
  type AiOutput,
  type AiRequestSpec,
  type StepMeta,
} from '../../core/execution-types';
import type { AiBudget } from './ai-budget';
import { rethrowIfCanceled, whileHeartbeating } from './heartbeat';
import { parseRetryAfter } from './retry-after';
import type { SecretResolution } from './secrets';

export interface AiProviderConfig {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
}

export interface AiActivityOptions {
  provider: AiProviderConfig;
  resolveSecrets: (workspaceId: string, value: unknown, pointers: string[]) => Promise<SecretResolution>;
  maxResponseBytes: number;
  /** Checks answers against the step's output_schema (in the workspace's name, off the event loop). */
  schemas: SchemaValidation;
  /** The workspace's AI token budget: checked before each call, charged after it (ai-budget.ts). */
  budget: AiBudget;
}

interface ChatCompletion {
  model?: string;
  choices?: { message?: { content?: string | null } }[];
  usage?: Record<string, unknown>;
  error?: { message?: string };
}

export function createAiActivity(options: AiActivityOptions) {
  /** Called like connector_http: the step local activity also passes the signal that ends the attempt. */
  return async function ai(
    spec: AiRequestSpec,
    meta: StepMeta,
    signal: AbortSignal = Context.current().cancellationSignal,
  ): Promise<AiOutput> {
    const { baseUrl, apiKey } = options.provider;
    const model = spec.model ?? options.provider.model;
    if (!baseUrl) {
      throw ApplicationFailure.nonRetryable(
        'No AI provider is configured: set AI_BASE_URL (an OpenAI-compatible API), AI_API_KEY and AI_MODEL for the worker.',
        STEP_ERROR_CODES.aiNotConfigured,
      );
    }
    if (!model) {
      throw ApplicationFailure.nonRetryable(
        'No AI model: set AI_MODEL for the worker or `model` on the step.',
        STEP_ERROR_CODES.aiNotConfigured,
      );
    }
    await options.budget.check(meta.workspaceId);
    // Secrets may sit in `system` or `prompt` (the workflow names where); they are filled in here only.
    const secrets = await options.resolveSecrets(
      meta.workspaceId,
      { system: spec.system, prompt: spec.prompt },
      meta.secretPointers,
    );
    const { system, prompt } = secrets.value as { system: string | null; prompt: string };
    const body: Record<string, unknown> = {
      model,
      messages: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }],
    };
    if (spec.temperature !== null) body['temperature'] = spec.temperature;
    if (spec.max_tokens !== null) body['max_tokens'] = spec.max_tokens;
    if (spec.output_schema) {
      body['response_format'] = {
        type: 'json_schema',
        json_schema: { name: 'step_output', schema: spec.output_schema, strict: true },
      };
    }
    try {
      const completion = await whileHeartbeating(() =>
        callProvider(baseUrl, apiKey, body, options.maxResponseBytes, signal),
      );
      // The tokens are spent whether or not the answer is usable. A count that cannot be written (the
      // database is away) is lost rather than the answer: failing would call the provider again.
      await options.budget.record(meta.workspaceId, completion.usage).catch((error: unknown) => {
        Context.current().log.warn('Could not count the AI tokens of a call', { error: String(error) });
      });
      return secrets.mask(
        await toOutput(completion, model, spec.output_schema, (schema, json) =>
          options.schemas.validate(meta.workspaceId, schema, json),
        ),
      );
    } catch (error) {
      rethrowIfCanceled();
      if (error instanceof SchemaError) {
        // Saved before a rule that now refuses it (the schema limits): trying again cannot help.
        throw ApplicationFailure.nonRetryable(
          `The step's output_schema is no longer accepted: ${error.message}. Save a new version.`,
          STEP_ERROR_CODES.invalidRequest,
        );
      }
      throw secrets.maskFailure(
        error instanceof ApplicationFailure
          ? error
          : ApplicationFailure.retryable(
              `AI provider unreachable: ${(error as Error).message}`,
              STEP_ERROR_CODES.network,
            ),
      );
    }
  };
}

async function callProvider(
  baseUrl: string,
  apiKey: string | undefined,
  body: unknown,
  maxBytes: number,
  signal: AbortSignal,
): Promise<ChatCompletion> {
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify(body),
    signal,
  });
  const text = await readText(response.body, maxBytes);
  let parsed: ChatCompletion = {};
  try {
    parsed = JSON.parse(text) as ChatCompletion;
  } catch {
    // not JSON: reported below with the status
  }
  const status = response.statusCode;
  if (status >= 200 && status < 300) return parsed;
  const message = `The AI provider answered ${status}: ${parsed.error?.message ?? text.slice(0, 300)}`;
  if (status === 429 || status >= 500) {
    const retryAfter = parseRetryAfter(headerValue(response.headers['retry-after']));
    throw ApplicationFailure.create({
      type: STEP_ERROR_CODES.aiProvider,
      message,
      ...(retryAfter !== undefined ? { nextRetryDelay: retryAfter } : {}),
    });
  }
  throw ApplicationFailure.nonRetryable(message, STEP_ERROR_CODES.aiProvider);
}

async function toOutput(
  completion: ChatCompletion,
  requestedModel: string,
  outputSchema: Record<string, unknown> | null,
  validate: (schema: Record<string, unknown>, json: unknown) => Promise<{ problems: ErrorDetail[] }>,
): Promise<AiOutput> {
  const content = completion.choices?.[0]?.message?.content;
  if (typeof content !== 'string') {
    throw ApplicationFailure.retryable(
      'The AI provider returned no message content.',
      STEP_ERROR_CODES.aiInvalidOutput,
    );
  }
  const model = completion.model ?? requestedModel;
  const usage = completion.usage
    ? (Object.fromEntries(
        Object.entries(completion.usage).filter(([, v]) => typeof v === 'number'),
      ) as Record<string, number>)
    : null;
  if (!outputSchema) return { text: content, model, usage };
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    throw ApplicationFailure.retryable(
      `The model's answer is not JSON: ${content.slice(0, 200)}`,
      STEP_ERROR_CODES.aiInvalidOutput,
    );
  }
  const { problems } = await validate(outputSchema, json);
  if (problems.length > 0) {
    throw ApplicationFailure.create({
      type: STEP_ERROR_CODES.aiInvalidOutput,
      message: `The model's answer does not match output_schema: ${problems
        .map((p) => `${p.path || '/'} ${p.message}`)
        .join('; ')}`,
      details: [{ answer: json }],
    });
  }
  return { json, model, usage };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readText(
  body: AsyncIterable<unknown> & { destroy(): void },
  maxBytes: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw ApplicationFailure.nonRetryable(
        `The AI provider's response is larger than ${maxBytes} bytes.`,
        STEP_ERROR_CODES.responseTooLarge,
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
