/**
 * POST /v1/hooks/{workflow} (docs/webhooks.md#inbound-hooks): the signed inbound trigger of workflows with a
 * webhook trigger. Order of checks: the workflow exists with a webhook trigger (404), the signature over the
 * raw bytes (401, before anything looks at the body), the per-workflow rate limit (429), then the body is
 * parsed (415/400) and the execution starts like the trigger endpoint's, idempotent on the signed content.
 */
import { z } from 'zod';
import { AppError, notFound } from '../../platform/errors';
import { workflowIdSchema } from '../../core/definitions/schema';
import { triggerExecution } from '../executions/trigger';
import { openHookSecret } from '../../platform/store/hook-secrets';
import { hookExecutionId } from '../../platform/ids';
import {
  replayKey,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_SECONDS,
  verifySignature,
  type VerifyResult,
} from '../inbound-hooks/signature';
import { createRateLimiter, enforceRateLimit, type RateLimiter } from '../http/rate-limit';
import type { Services } from '../services';
import { parseJsonBody } from '../http/body';
import { defineRoute, type AnyRoute } from './route';
import { TRIGGER_INPUT } from './semantic-errors';
import { acceptedExample, acceptedSchema, EXAMPLE_INPUT, EXECUTION_LINKS } from './schemas';

/**
 * One limiter per running service, keyed by workspace and workflow, with the per-key settings
 * (RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST). Only verified requests are counted, so requests without
 * the secret cannot use up a sender's budget.
 */
const limiterByService = new WeakMap<Services, RateLimiter>();

function hookLimiter(services: Services): RateLimiter {
  let limiter = limiterByService.get(services);
  if (!limiter) {
    limiter = createRateLimiter({
      ...services.config.rateLimit,
      name: 'hook',
      db: services.db,
      logger: services.logger,
    });
    limiterByService.set(services, limiter);
  }
  return limiter;
}

const SIGNATURE_PROBLEMS: Record<Exclude<VerifyResult, { ok: true }>['reason'], string> = {
  missing: `The ${SIGNATURE_HEADER} header is missing.`,
  malformed: `The ${SIGNATURE_HEADER} header is malformed; expected t=<unix seconds>,v1=<hex HMAC-SHA256>.`,
  stale: `The ${SIGNATURE_HEADER} timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} s away from now.`,
  mismatch: `No ${SIGNATURE_HEADER} v1 value matches the request body.`,
};

const DESCRIPTION = [
  'Starts an execution of a workflow whose latest version has a webhook trigger. No API key: the request is',
  `authenticated by the \`${SIGNATURE_HEADER}\` header,`,
  '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the workflow\'s hook secret',
  '(the whole `whsec_...` string as UTF-8 bytes; it is returned once as `hook_secret` when a webhook version is',
  'first saved, and by POST /v1/workflows/{id}/hook-secret, which rotates it).',
  '',
  'The signature is checked over the exact body bytes before the body is parsed, in constant time. Several `v1=`',
  'values may be sent (one match suffices), so a sender can roll its secret. A timestamp more than',
  `${SIGNATURE_TOLERANCE_SECONDS} s older or newer than the server's clock, or a missing, malformed or wrong`,
  'signature, answers 401 `invalid_signature`. An unknown workflow, or one without a webhook trigger, answers',
  '404 `workflow_not_found`. When the same workflow id exists in several workspaces, the signature decides which',
  'one is meant.',
  '',
  'The body is the input object, validated against the input_schema (400 `invalid_input`). The same signed',
  'request (same `t` and body) sent again answers with the same execution_id and starts nothing new (as long',
  'as the execution is kept: the namespace retention, 30 days by default; a signature is only accepted for',
  `${SIGNATURE_TOLERANCE_SECONDS} s anyway).`,
  'Verified requests are rate-limited per workflow (token bucket with the per-key settings, shared by every',
  'API process over a PostgreSQL server); responses carry RateLimit-Limit, RateLimit-Remaining and',
  'RateLimit-Reset, and a 429 `rate_limited` adds Retry-After.',
  '',
  'Example, for a workflow `new-signup` with a webhook trigger whose hook secret is in `HOOK_SECRET`:',
  '```',
  'body=\'{"customer":"Ada","plan":"pro"}\'; t=$(date +%s)',
  'sig=$(printf \'%s.%s\' "$t" "$body" | openssl dgst -sha256 -hmac "$HOOK_SECRET" | sed \'s/^.* //\')',
  'curl -X POST https://switchyard.example/v1/hooks/new-signup \\',
  '  -H \'Content-Type: application/json\' -H "X-Service-Signature: t=$t,v1=$sig" --data-binary "$body"',
  '```',
].join('\n');

export function hookRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/hooks/{workflow}',
      operationId: 'triggerHook',
      summary: 'Start an execution from a signed inbound hook',
      description: DESCRIPTION,
      tag: 'Hooks',
      auth: 'none',
      params: z.object({ workflow: z.string().meta({ description: 'The workflow id.' }) }),
      headers: z.object({
        'X-Service-Signature': z.string().meta({
          description:
            't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the hook secret>; several v1= values allowed.',
          example: 't=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
        }),
      }),
      body: z
        .record(z.string(), z.unknown())
        .meta({ description: 'The input fields.', example: EXAMPLE_INPUT }),
      bodyValidation: 'handler',
      bodyParsing: 'handler',
      responses: {
        202: {
          description: 'Accepted: the execution runs',
          schema: acceptedSchema,
          example: { ...acceptedExample, execution_id: 'ex_Rk5vB2nX8qT1wZ4cM7pL9sD3' },
          links: { getExecution: EXECUTION_LINKS.getExecution },
        },
      },
      errors: [401, 404, 429, 503],
      semanticErrors: [TRIGGER_INPUT],
      handler: async ({ koa, services, params, rawBody, requestId }) => {
        const workflowId = params.workflow;
        const candidates = workflowIdSchema.safeParse(workflowId).success
          ? await services.reads.hookCandidates(workflowId)
          : [];
        if (candidates.length === 0) {
          throw notFound('workflow_not_found', `No workflow '${workflowId}' with a webhook trigger.`);
        }
        const verified = verifySignature({
          header: koa.get(SIGNATURE_HEADER),
          rawBody,
          secrets: candidates.map((candidate) => openHookSecret(services.cipher, candidate)),
        });
        if (!verified.ok) {
          throw new AppError(401, 'invalid_signature', SIGNATURE_PROBLEMS[verified.reason], {
            details: [{ path: `/headers/${SIGNATURE_HEADER}`, message: `is ${verified.reason}` }],
          });
        }
        const { workspaceId } = candidates[verified.index]!;

        // Workflow ids are slugs: the last "/" separates them from the workspace id.
        await enforceRateLimit(
          koa,
          hookLimiter(services),
          `${workspaceId}/${workflowId}`,
          `workflow '${workflowId}'`,
        );

        const { executionId } = await triggerExecution(services, {
          workspaceId,
          workflowId,
          body: parseJsonBody(koa, rawBody),
          executionId: hookExecutionId(workspaceId, workflowId, replayKey(verified.timestamp, rawBody)),
          triggerType: 'webhook',
          requestId,
        });
        return { status: 202, body: { status: 'accepted', execution_id: executionId } };
      },
    }),
  ];
}
