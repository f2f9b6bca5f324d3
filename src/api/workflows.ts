/** Workflows (docs/api.md#workflows): versioned definitions, and the trigger that starts an execution. */
import { z } from 'zod';
import { AppError, invalidRequest, notFound } from '../../platform/errors';
import { parseDefinition } from '../definitions/validate';
import {
  DEFINITION_EXAMPLE,
  definitionSchema,
  workflowIdSchema,
  type Definition,
} from '../../core/definitions/schema';
import { triggerExecution } from '../executions/trigger';
import { rotateHookSecret } from '../../platform/store/hook-secrets';
import {
  afterWorkflowCommitted,
  afterWorkflowSaved,
  beforeWorkflowDeleted,
  type SaveExtras,
} from '../definitions/lifecycle';
import {
  createWorkflow,
  deleteWorkflow,
  getWorkflowVersion,
  listWorkflows,
  listWorkflowVersions,
  saveWorkflowVersion,
  workflowExists,
  type SavedWorkflow,
  type WorkflowListing,
  type WorkflowVersionRecord,
} from '../../platform/store/workflows';
import type { Services } from '../services';
import { checkStepsLimit, limitOf } from '../workspaces/limits';
import { isString } from '../http/cursor';
import { defineListRoute } from './list-route';
import { defineRoute, type AnyRoute } from './route';
import { QUEUE_EXAMPLE, queueSchema } from './queue-schema';
import { workflowQueue } from '../flow-control/queue';
import { DEFINITION_ERRORS, NUL_TEXT, TRIGGER_INPUT, VERSION_ID } from './semantic-errors';
import { acceptedExample, acceptedSchema, EXAMPLE_INPUT, EXECUTION_LINKS, timestamp } from './schemas';

const triggerTypeSchema = z.enum(['api', 'webhook', 'schedule', 'event']);

const workflowListItemSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    trigger: z.object({ type: triggerTypeSchema }),
    version: z.number().int().meta({ description: 'The latest version.' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WorkflowListItem' });

const workflowVersionSchema = z
  .object({ version: z.number().int(), created_at: timestamp.meta({ description: 'When it was saved.' }) })
  .meta({ id: 'WorkflowVersion' });

const workflowSchema = definitionSchema
  .extend({
    hook_secret: z.string().optional().meta({
      description:
        'The inbound hook signing secret: only in the response of the save that created it (webhook triggers).',
    }),
    version: z.number().int(),
    created_at: timestamp.meta({ description: 'When the workflow was created (version 1).' }),
    updated_at: timestamp.meta({ description: 'When its latest version was saved.' }),
    version_created_at: timestamp.meta({ description: 'When this version was saved.' }),
    latest_version: z.number().int(),
    versions: z.array(workflowVersionSchema).meta({
      description:
        'The 20 newest versions, oldest first (versions are numbered 1 to latest_version). ' +
        'GET /v1/workflows/{id}/versions pages through all of them.',
    }),
  })
  .meta({ id: 'Workflow' });

const workflowExample = {
  ...DEFINITION_EXAMPLE,
  version: 3,
  created_at: '2026-11-02T14:05:31.902Z',
  updated_at: '2026-11-20T16:48:12.377Z',
  version_created_at: '2026-11-20T16:48:12.377Z',
  latest_version: 3,
  versions: [
    { version: 1, created_at: '2026-11-02T14:05:31.902Z' },
    { version: 2, created_at: '2026-11-12T08:21:07.045Z' },
    { version: 3, created_at: '2026-11-20T16:48:12.377Z' },
  ],
};

const workflowListItemExample = {
  id: DEFINITION_EXAMPLE.id,
  name: DEFINITION_EXAMPLE.name,
  description: DEFINITION_EXAMPLE.description,
  trigger: { type: 'api' },
  version: 3,
  created_at: '2026-11-02T14:05:31.902Z',
  updated_at: '2026-11-20T16:48:12.377Z',
};

/**
 * Beyond their schema, definitions are checked on save (src/definitions/validate.ts) for what no JSON
 * Schema can say; the create and save operations describe those checks.
 */
const DEFINITION_CHECKS =
  'Beyond this schema, a definition is checked on save, and all problems are reported together (400 ' +
  'invalid_definition, one `details` entry per problem with its JSON pointer, nested steps included, as in ' +
  '/steps/2/branches/0/steps/1/id): step ids are unique in the whole definition, nested steps included, ' +
  'branch ids within a parallel step and case ids within a switch (`default` is not a case id); steps nest ' +
  "at most 5 levels; a map's `as` is not a name the context has already; every JSONata expression (`if`, " +
  "`when`, a map's `items`, a loop's `until`, an event trigger's `if`) and every `{{ }}` template (in steps, a workflow step's " +
  "`input` and the definition's `output`) parses, and reads only steps it can see (earlier steps of its " +
  "own list and those before each container around it; from outside a container only the container; a loop's " +
  "`until` also its iteration's steps; the `output` the top-level steps); `secrets.NAME` is read only by " +
  "connector and ai step templates, alone in its string; `input_schema` and an ai step's `output_schema` " +
  "compile as JSON Schema (draft 2020-12); a schedule trigger's `timezone` is an IANA time zone name spelt " +
  'exactly, its `input` satisfies the `input_schema`, its `cron` is an expression Temporal accepts; and it ' +
  "has at most 500 steps, nested steps and containers included, and no more than the workspace's " +
  '`steps_per_definition` limit (GET /v1/workspace; 400 invalid_definition at /steps).';

/** A PUT body: a definition whose id may be left out, since the URL names the workflow. */
const definitionVersionSchema = definitionSchema
  .extend({
    id: workflowIdSchema.optional().meta({
      description: "May be left out: the URL names the workflow. When given, it must be the URL's id.",
    }),
  })
  .meta({
    id: 'WorkflowDefinitionVersion',
    example: Object.fromEntries(Object.entries(DEFINITION_EXAMPLE).filter(([key]) => key !== 'id')),
  });

const idParams = z.object({ id: z.string() });
const versionParam = z.coerce
  .number()
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .max(2_147_483_647)
  .optional();

const workflowTaken = (id: string) =>
  new AppError(
    409,
    'workflow_exists',
    `A workflow '${id}' already exists in this workspace; PUT /v1/workflows/${id} saves a new version.`,
  );

const workflowNotFound = (id: string) =>
  notFound('workflow_not_found', `No workflow '${id}' in this workspace.`);

function toListItem(row: WorkflowListing) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    trigger: { type: row.trigger_type as z.infer<typeof triggerTypeSchema> },
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** How many versions a workflow's read lists; GET /v1/workflows/{id}/versions pages through all. */
const VERSIONS_SHOWN = 20;

async function toWorkflowView(services: Services, workspaceId: string, record: WorkflowVersionRecord) {
  const newest = await listWorkflowVersions(services.db, workspaceId, record.workflow_id, {
    limit: VERSIONS_SHOWN,
  });
  // Oldest first, as the list always was; only the newest are in it.
  const versions = newest.reverse();
  return {
    ...record.definition,
    version: record.version,
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
    version_created_at: record.version_created_at.toISOString(),
    latest_version: record.latest_version,
    versions: versions.map((v) => ({ version: v.version, created_at: v.created_at.toISOString() })),
  };
}

/**
 * The answer to a save (a new workflow or version) once it committed: its schedule follows it first
 * (afterWorkflowCommitted), then the workflow as a read shows it, with what the save made (a hook secret).
 */
async function committedWorkflowView(
  services: Services,
  workspaceId: string,
  saved: SavedWorkflow<SaveExtras>,
) {
  await afterWorkflowCommitted(services, workspaceId, saved.record);
  return { ...(await toWorkflowView(services, workspaceId, saved.record)), ...saved.extra };
}

/** A PUT body may leave out `id` (the URL names the workflow); a different one is a mistake. */
function definitionForPut(
  services: Services,
  workspaceId: string,
  pathId: string,
  body: unknown,
): Promise<Definition> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const withId = { id: pathId, ...body } as Record<string, unknown>;
    if (withId['id'] !== pathId) {
      throw new AppError(
        400,
        'invalid_definition',
        `The definition's id '${String(withId['id'])}' does not match the URL's '${pathId}'.`,
        {
          details: [{ path: '/id', message: `must be '${pathId}'` }],
        },
      );
    }
    return parseDefinition(withId, services.schemas, workspaceId);
  }
  return parseDefinition(body, services.schemas, workspaceId);
}

const isVersion = (value: unknown): value is number => Number.isInteger(value) && (value as number) > 0;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function workflowRoutes(): AnyRoute[] {
  return [
    defineListRoute({
      path: '/v1/workflows',
      operationId: 'listWorkflows',
      summary: 'List workflows',
      tag: 'Workflows',
      auth: 'read',
      page: {
        description: 'A page of workflows, by id',
        item: workflowListItemSchema,
        id: 'WorkflowList',
        example: workflowListItemExample,
      },
      scope: ({ auth }) => ['workflows', auth.workspaceId],
      isPosition: isString,
      fetch: ({ services, auth }, page) => listWorkflows(services.db, auth.workspaceId, page),
      positionOf: (row) => row.id,
      toView: toListItem,
    }),
    defineRoute({
      method: 'post',
      path: '/v1/workflows',
      operationId: 'createWorkflow',
      summary: 'Create a workflow (version 1)',
      description:
        `${DEFINITION_CHECKS} A workflow past the workspace's \`workflows\` limit is 409 limit_exceeded ` +
        '(GET /v1/workspace); an id the workspace already has is 409 workflow_exists.',
      tag: 'Workflows',
      auth: 'write',
      body: definitionSchema,
      bodyValidation: 'handler',
      bodyRequired: true,
      responses: {
        201: {
          description: 'Created',
          schema: workflowSchema,
          example: {
            ...workflowExample,
            version: 1,
            latest_version: 1,
            versions: workflowExample.versions.slice(0, 1),
            updated_at: workflowExample.created_at,
            version_created_at: workflowExample.created_at,
          },
          links: {
            getWorkflow: { operationId: 'getWorkflow', parameters: { id: '$response.body#/id' } },
            saveWorkflowVersion: {
              operationId: 'saveWorkflowVersion',
              parameters: { id: '$response.body#/id' },
            },
            deleteWorkflow: { operationId: 'deleteWorkflow', parameters: { id: '$response.body#/id' } },
            triggerWorkflow: { operationId: 'triggerWorkflow', parameters: { id: '$response.body#/id' } },
            rotateHookSecret: {
              operationId: 'rotateHookSecret',
              parameters: { id: '$response.body#/id' },
              description: 'Workflows with a webhook trigger only (409 no_webhook_trigger otherwise).',
            },
          },
        },
      },
      errors: [409],
      semanticErrors: [...DEFINITION_ERRORS, NUL_TEXT],
      errorExamples: {
        409: { code: 'workflow_exists', message: workflowTaken(DEFINITION_EXAMPLE.id).message },
      },
      handler: async ({ services, auth, body }) => {
        const definition = await parseDefinition(body, services.schemas, auth.workspaceId);
        await checkStepsLimit(services, auth.workspaceId, definition);
        const maxWorkflows = await limitOf(services, auth.workspaceId, 'workflows');
        const saved = await createWorkflow(
          services.db,
          auth.workspaceId,
          definition,
          maxWorkflows,
          (tx, record) => afterWorkflowSaved(services, tx, auth.workspaceId, record),
        );
        if (!saved) throw workflowTaken(definition.id);
        return { status: 201, body: await committedWorkflowView(services, auth.workspaceId, saved) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/workflows/{id}',
      operationId: 'getWorkflow',
      summary: 'Read a workflow: the latest version, or ?version=N',
      tag: 'Workflows',
      auth: 'read',
      params: idParams,
      query: z.strictObject({ version: versionParam }),
      responses: {
        200: {
          description: 'The definition with its version history',
          schema: workflowSchema,
          example: workflowExample,
        },
      },
      errors: [400, 404],
      handler: async ({ services, auth, params, query }) => {
        const record = await getWorkflowVersion(services.db, auth.workspaceId, params.id, query.version);
        if (!record) {
          if (
            query.version !== undefined &&
            (await getWorkflowVersion(services.db, auth.workspaceId, params.id))
          ) {
            throw notFound('workflow_not_found', `Workflow '${params.id}' has no version ${query.version}.`);
          }
          throw workflowNotFound(params.id);
        }
        return { status: 200, body: await toWorkflowView(services, auth.workspaceId, record) };
      },
    }),
    defineListRoute({
      path: '/v1/workflows/{id}/versions',
      operationId: 'listWorkflowVersions',
      summary: "List a workflow's versions, newest first",
      tag: 'Workflows',
      auth: 'read',
      params: idParams,
      page: {
        description: 'A page of versions, newest first',
        item: workflowVersionSchema,
        id: 'WorkflowVersionList',
        example: workflowExample.versions[2],
      },
      errors: [404],
      check: async ({ services, auth, params }) => {
        if (!(await workflowExists(services.db, auth.workspaceId, params.id)))
          throw workflowNotFound(params.id);
      },
      scope: ({ auth, params }) => ['workflow-versions', auth.workspaceId, params.id],
      isPosition: isVersion,
      fetch: ({ services, auth, params }, page) =>
        listWorkflowVersions(services.db, auth.workspaceId, params.id, page),
      positionOf: (row) => row.version,
      toView: (row) => ({ version: row.version, created_at: row.created_at.toISOString() }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/workflows/{id}/queue',
      operationId: 'getWorkflowQueue',
      summary: "A workflow's queue: executions queued and open under its concurrency, by key",
      description:
        'Counts of the executions that flow control holds (docs/flow-control.md): queued, and open (running or ' +
        'waiting) under `concurrency`, in all and for the 20 busiest keys. A workflow without `concurrency` has none.',
      tag: 'Workflows',
      auth: 'read',
      params: idParams,
      responses: {
        200: { description: 'The counts', schema: queueSchema, example: QUEUE_EXAMPLE },
      },
      errors: [404],
      handler: async ({ services, auth, params }) => {
        if (!(await workflowExists(services.db, auth.workspaceId, params.id)))
          throw workflowNotFound(params.id);
        return { status: 200, body: await workflowQueue(services.db, auth.workspaceId, params.id) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/workflows/{id}',
      operationId: 'saveWorkflowVersion',
      summary: 'Save a new version of a workflow',
      description: `${DEFINITION_CHECKS} The body's \`id\`, when given, must be the URL's (400 invalid_definition).`,
      tag: 'Workflows',
      auth: 'write',
      params: idParams,
      body: definitionVersionSchema,
      bodyValidation: 'handler',
      bodyRequired: true,
      responses: {
        200: { description: 'The new version', schema: workflowSchema, example: workflowExample },
      },
      errors: [404],
      semanticErrors: [...DEFINITION_ERRORS, NUL_TEXT, VERSION_ID],
      handler: async ({ services, auth, params, body }) => {
        if (!workflowIdSchema.safeParse(params.id).success) throw workflowNotFound(params.id);
        const definition = await definitionForPut(services, auth.workspaceId, params.id, body);
        await checkStepsLimit(services, auth.workspaceId, definition);
        const saved = await saveWorkflowVersion(services.db, auth.workspaceId, definition, (tx, record) =>
          afterWorkflowSaved(services, tx, auth.workspaceId, record),
        );
        if (!saved) throw workflowNotFound(params.id);
        return { status: 200, body: await committedWorkflowView(services, auth.workspaceId, saved) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/workflows/{id}',
      operationId: 'deleteWorkflow',
      summary: 'Delete a workflow and its versions (running executions go on)',
      tag: 'Workflows',
      auth: 'write',
      params: idParams,
      responses: { 204: { description: 'Deleted' } },
      errors: [404],
      handler: async ({ services, auth, params }) => {
        // Only an existing workflow's schedule is removed (the id could be anything); then its rows.
        if (!(await getWorkflowVersion(services.db, auth.workspaceId, params.id)))
          throw workflowNotFound(params.id);
        await beforeWorkflowDeleted(services, auth.workspaceId, params.id);
        const deleted = await deleteWorkflow(services.db, auth.workspaceId, params.id);
        if (!deleted) throw workflowNotFound(params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/workflows/{id}/hook-secret',
      operationId: 'rotateHookSecret',
      summary: 'Rotate the inbound hook signing secret (shown once)',
      description:
        'For a workflow whose latest version has a webhook trigger (409 no_webhook_trigger otherwise). The ' +
        'previous secret stops working at once.',
      tag: 'Workflows',
      auth: 'write',
      params: idParams,
      responses: {
        200: {
          description: 'The new secret, shown only here',
          schema: z.object({ hook_secret: z.string() }).meta({ id: 'HookSecret' }),
          example: { hook_secret: 'whsec_Mfz0cG9ydC1ob29rLXNlY3JldC1leGFtcGxl' },
        },
      },
      errors: [404, 409],
      handler: async ({ services, auth, params }) => {
        const record = await getWorkflowVersion(services.db, auth.workspaceId, params.id);
        if (!record) throw workflowNotFound(params.id);
        // A conflict with the workflow's current state (saving a version with a webhook trigger resolves
        // it), not a malformed request: the request itself is well formed.
        if (record.definition.trigger?.type !== 'webhook') {
          throw new AppError(
            409,
            'no_webhook_trigger',
            `Workflow '${params.id}' has no webhook trigger, so it has no hook secret; save a version with {"type": "webhook"} first.`,
            { details: [{ path: '/trigger/type', message: 'must be "webhook"' }] },
          );
        }
        return {
          status: 200,
          body: {
            hook_secret: await rotateHookSecret(services.db, services.cipher, auth.workspaceId, params.id),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/workflows/{id}/trigger',
      operationId: 'triggerWorkflow',
      summary: 'Start an execution',
      description:
        'The body is the input object, validated against the input_schema (400 invalid_input). ' +
        'An Idempotency-Key header makes the call idempotent for 24 hours (per workflow): the same key answers with the same execution_id.',
      tag: 'Workflows',
      auth: 'write',
      params: idParams,
      query: z.strictObject({ version: versionParam }),
      headers: z.object({
        'Idempotency-Key': z.string().max(255).optional().meta({
          description:
            'The same key (per workflow, 24 h) answers the same execution_id. 1 to 255 visible ASCII characters.',
          pattern: IDEMPOTENCY_KEY.source,
        }),
      }),
      body: z
        .record(z.string(), z.unknown())
        .meta({ description: 'The input fields.', example: EXAMPLE_INPUT }),
      bodyValidation: 'handler',
      responses: {
        202: {
          description: 'Accepted: the execution runs',
          schema: acceptedSchema,
          example: acceptedExample,
          links: EXECUTION_LINKS,
        },
      },
      errors: [404],
      semanticErrors: [TRIGGER_INPUT],
      handler: async ({ koa, services, auth, params, query, body, requestId }) => {
        // An empty header is refused, not taken for an absent one: a client that means to be idempotent
        // and sends an empty key (an unset variable) would otherwise start a new execution on every retry.
        const header = koa.headers['idempotency-key'];
        const idempotencyKey = Array.isArray(header) ? header.join(', ') : header;
        if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
          throw invalidRequest('The Idempotency-Key header must be 1 to 255 visible ASCII characters.', [
            { path: '/headers/Idempotency-Key', message: 'is invalid' },
          ]);
        }
        const { executionId } = await triggerExecution(services, {
          workspaceId: auth.workspaceId,
          workflowId: params.id,
          ...(query.version !== undefined ? { version: query.version } : {}),
          body,
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
          triggerType: 'api',
          requestId,
        });
        return { status: 202, body: { status: 'accepted', execution_id: executionId } };
      },
    }),
  ];
}
