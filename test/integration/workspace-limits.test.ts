/**
 * Workspace limits (docs/operations.md#workspace-limits): counts a workspace keeps at most (409
 * limit_exceeded, also under concurrent creates), steps per definition (400 invalid_definition), what
 * GET /v1/workspace reports, the operator's `npm run admin` commands that change them, and the console
 * sessions a workspace keeps.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { definition, expectError, rulesStep, trigger, uniqueId } from '../support/fixtures';
import { DB_KINDS, startTestService, type ApiClient, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const execFileAsync = promisify(execFile);

const LIMITS = {
  WORKSPACE_MAX_WORKFLOWS: '3',
  WORKSPACE_MAX_SECRETS: '2',
  WORKSPACE_MAX_WEBHOOK_ENDPOINTS: '2',
  WORKSPACE_MAX_API_KEYS: '3',
  WORKSPACE_MAX_STEPS_PER_DEFINITION: '5',
  WORKSPACE_MAX_CONSOLE_SESSIONS: '3',
};

const constantStep = (id: string) => rulesStep(id, [], { default: { ok: true } });
const workflowBody = () => definition([constantStep('only')]);

/** The requests that create one object of each counted kind (a fresh name or id each time). */
const CREATE: Record<string, (api: ApiClient) => Promise<{ status: number; body: unknown }>> = {
  workflows: (api) => api.post('/v1/workflows', workflowBody()),
  secrets: (api) => api.put(`/v1/secrets/S_${uniqueId('x').replace('-', '_')}`, { value: 'secret-value' }),
  webhook_endpoints: (api) =>
    api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['execution.completed'] }),
  api_keys: (api) => api.post('/v1/api-keys', { name: 'extra', scopes: ['read'] }),
};

/** The maximum of each counted kind in LIMITS; a new workspace starts with one API key (its test key). */
const MAX: Record<string, number> = { workflows: 3, secrets: 2, webhook_endpoints: 2, api_keys: 3 };
const INITIAL: Record<string, number> = { workflows: 0, secrets: 0, webhook_endpoints: 0, api_keys: 1 };

function expectLimitExceeded(res: { status: number; body: unknown }, limit: string, max: number): void {
  expectError(res, 409, 'limit_exceeded');
  const details = (res.body as { error: { details: { limit?: string; max?: number }[] } }).error.details;
  expect(details).to.have.length(1);
  expect(details[0]).to.include({ limit, max });
}

describe('workspace limits @integration', function () {
  this.timeout(300_000);

  for (const db of DB_KINDS) {
    describe(`counted objects (${db})`, () => {
      let service: TestService;
      before(async () => {
        service = await startTestService({ db, env: LIMITS, worker: false });
      });
      after(async () => service?.stop());

      for (const [limit, create] of Object.entries(CREATE)) {
        it(`answers 409 limit_exceeded for one ${limit} more than allowed`, async () => {
          const api = service.api((await service.newWorkspace(['admin'])).key);
          for (let i = INITIAL[limit]!; i < MAX[limit]!; i++) {
            const res = await create(api);
            expect(res.status, JSON.stringify(res.body)).to.be.within(200, 204);
          }
          expectLimitExceeded(await create(api), limit, MAX[limit]!);
          const usage = (await api.get('/v1/workspace').expect(200)).body.usage as Record<string, number>;
          expect(usage[limit]).to.equal(MAX[limit]);
        });

        it(`never passes the ${limit} limit under concurrent creates`, async () => {
          const api = service.api((await service.newWorkspace(['admin'])).key);
          const results = await Promise.all(Array.from({ length: 8 }, () => create(api)));
          const created = results.filter((res) => res.status >= 200 && res.status < 300);
          const refused = results.filter((res) => res.status === 409);
          expect(created, JSON.stringify(results.map((r) => r.body))).to.have.length(
            MAX[limit]! - INITIAL[limit]!,
          );
          expect(refused).to.have.length(8 - created.length);
          for (const res of refused) expectLimitExceeded(res, limit, MAX[limit]!);
          const usage = (await api.get('/v1/workspace').expect(200)).body.usage as Record<string, number>;
          expect(usage[limit]).to.equal(MAX[limit]);
        });
      }

      it('always lets a workspace replace the value of an existing secret, even at its limit', async () => {
        const api = service.api((await service.newWorkspace(['write'])).key);
        await api.put('/v1/secrets/FIRST', { value: 'value-one' }).expect(204);
        await api.put('/v1/secrets/SECOND', { value: 'value-two' }).expect(204);
        expectLimitExceeded(await api.put('/v1/secrets/THIRD', { value: 'value-three' }), 'secrets', 2);
        await api.put('/v1/secrets/FIRST', { value: 'value-one-replaced' }).expect(204);
      });

      it('counts active API keys only: revoking one makes room for another', async () => {
        const api = service.api((await service.newWorkspace(['admin'])).key);
        const first = await api.post('/v1/api-keys', { name: 'a', scopes: ['read'] }).expect(201);
        await api.post('/v1/api-keys', { name: 'b', scopes: ['read'] }).expect(201);
        expectLimitExceeded(await api.post('/v1/api-keys', { name: 'c', scopes: ['read'] }), 'api_keys', 3);
        await api.delete(`/v1/api-keys/${first.body.id as string}`).expect(204);
        await api.post('/v1/api-keys', { name: 'c', scopes: ['read'] }).expect(201);
      });

      it('makes room again when an object is deleted, and limits each workspace on its own', async () => {
        const api = service.api((await service.newWorkspace(['write'])).key);
        const ids: string[] = [];
        for (let i = 0; i < 3; i++)
          ids.push((await api.post('/v1/workflows', workflowBody()).expect(201)).body.id);
        expectLimitExceeded(await api.post('/v1/workflows', workflowBody()), 'workflows', 3);
        const other = service.api((await service.newWorkspace(['write'])).key);
        await other.post('/v1/workflows', workflowBody()).expect(201);
        await api.delete(`/v1/workflows/${ids[0]!}`).expect(204);
        await api.post('/v1/workflows', workflowBody()).expect(201);
      });
    });
  }

  describe('one service (PGlite)', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService({ env: LIMITS });
    });
    after(async () => service?.stop());

    /**
     * Runs `npm run admin -- ...` (its compiled script) against this service's embedded database, with the
     * service's environment (where the defaults it shows come from).
     */
    async function admin(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
      try {
        const { stdout, stderr } = await execFileAsync(
          process.execPath,
          [path.join(projectRoot, 'dist/processes/admin.js'), ...args],
          { env: { ...process.env, ...LIMITS, DATA_DIR: service.config.dataDir, DATABASE_URL: '' } },
        );
        return { stdout, stderr, code: 0 };
      } catch (error) {
        const failed = error as { stdout: string; stderr: string; code: number };
        return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
      }
    }

    it('GET /v1/workspace reports the limits in effect and what the workspace uses of them', async () => {
      const { workspaceId, key } = await service.newWorkspace(['read']);
      const writer = service.api(await service.newKey(workspaceId, ['write']));
      const approval = await writer
        .post('/v1/workflows', definition([{ id: 'review', kind: 'approval' }]))
        .expect(201);
      await writer.post('/v1/workflows', workflowBody()).expect(201);
      await writer.put('/v1/secrets/CRM_TOKEN', { value: 'crm-token' }).expect(204);
      const executionId = await trigger(writer, approval.body.id as string);

      const body = await waitFor(
        async () => {
          const res = await service.api(key).get('/v1/workspace').expect(200);
          return res.body.usage.open_executions === 1 && res.body;
        },
        { what: 'the waiting execution in open_executions' },
      );
      expect(body).to.deep.equal({
        id: workspaceId,
        name: workspaceId,
        limits: {
          workflows: 3,
          secrets: 2,
          webhook_endpoints: 2,
          api_keys: 3,
          open_executions: 1000,
          steps_per_definition: 5,
          ai_tokens_per_day: null,
        },
        usage: {
          workflows: 2,
          secrets: 1,
          webhook_endpoints: 0,
          api_keys: 2,
          open_executions: 1,
          ai_tokens_today: 0,
        },
      });
      await writer.post(`/v1/executions/${executionId}/cancel`).expect(202);
      await waitFor(
        async () => (await service.api(key).get('/v1/workspace')).body.usage.open_executions === 0,
        { what: 'the canceled execution to leave open_executions' },
      );
    });

    it('refuses a definition with more steps than steps_per_definition, on create and on save', async () => {
      const api = service.api((await service.newWorkspace(['write'])).key);
      const steps = (count: number) => Array.from({ length: count }, (_, i) => constantStep(`s${i}`));
      const tooMany = definition(steps(6));
      const created = await api.post('/v1/workflows', tooMany);
      expectError(created, 400, 'invalid_definition');
      expect(created.body.error.details).to.deep.equal([
        {
          path: '/steps',
          message: 'has 6 steps; this workspace allows at most 5 per definition (limit steps_per_definition)',
        },
      ]);
      await api.post('/v1/workflows', { ...tooMany, steps: steps(5) }).expect(201);
      const saved = await api.put(`/v1/workflows/${tooMany['id'] as string}`, tooMany);
      expectError(saved, 400, 'invalid_definition');
      expect(saved.body.error.details[0].path).to.equal('/steps');
    });

    it('counts nested steps and their containers against steps_per_definition', async () => {
      const api = service.api((await service.newWorkspace(['write'])).key);
      const loop = (count: number) => ({
        id: 'repeat',
        kind: 'loop',
        max_iterations: 2,
        until: 'true',
        steps: Array.from({ length: count }, (_, i) => constantStep(`s${i}`)),
      });
      const tooMany = definition([loop(5)]);
      const created = await api.post('/v1/workflows', tooMany);
      expectError(created, 400, 'invalid_definition');
      expect(created.body.error.details).to.deep.equal([
        {
          path: '/steps',
          message:
            'has 6 steps (1 top-level, 5 nested); this workspace allows at most 5 per definition (limit steps_per_definition)',
        },
      ]);
      await api.post('/v1/workflows', definition([loop(4)])).expect(201);
    });

    it('npm run admin set-limits changes, lifts and resets a workspace’s limits; show-limits shows them', async () => {
      const { workspaceId, key } = await service.newWorkspace(['admin']);
      const api = service.api(key);
      const set = await admin(
        'set-limits',
        '--workspace',
        workspaceId,
        '--workflows',
        '1',
        '--secrets',
        'unlimited',
        '--steps-per-definition',
        '7',
        '--ai-tokens-per-day',
        '5000',
      );
      expect(set.code, set.stderr).to.equal(0);
      expect(set.stdout).to.match(/^workflows\s+1\s+workspace\s+0$/m);
      expect(set.stdout).to.match(/^secrets\s+unlimited\s+workspace\s+0$/m);
      expect(set.stdout).to.match(/^webhook_endpoints\s+2\s+default\s+0$/m);
      let limits = (await api.get('/v1/workspace').expect(200)).body.limits as Record<string, unknown>;
      expect(limits).to.include({
        workflows: 1,
        secrets: null,
        steps_per_definition: 7,
        ai_tokens_per_day: 5000,
      });

      await api.post('/v1/workflows', workflowBody()).expect(201);
      expectLimitExceeded(await api.post('/v1/workflows', workflowBody()), 'workflows', 1);
      for (const name of ['A', 'B', 'C'])
        await api.put(`/v1/secrets/${name}`, { value: 'value' }).expect(204);

      const reset = await admin('set-limits', '--workspace', workspaceId, '--workflows', 'default');
      expect(reset.code, reset.stderr).to.equal(0);
      limits = (await api.get('/v1/workspace').expect(200)).body.limits as Record<string, unknown>;
      expect(limits).to.include({ workflows: 3, secrets: null });
      await api.post('/v1/workflows', workflowBody()).expect(201);

      const shown = await admin('show-limits', '--workspace', workspaceId);
      expect(shown.stdout).to.include(`Workspace: ${workspaceId}`);
      expect(shown.stdout).to.match(/^workflows\s+3\s+default\s+2$/m);
      expect(shown.stdout).to.match(/^secrets\s+unlimited\s+workspace\s+3$/m);
    });

    it('npm run admin names the limit commands in its help, and refuses a value that is not a limit', async () => {
      const help = await admin('--help');
      expect(help.stdout).to.include('show-limits --workspace').and.include('set-limits --workspace');
      expect(help.stdout).to.include('--webhook-endpoints').and.include('--ai-tokens-per-day');
      const { workspaceId } = await service.newWorkspace(['read']);
      const wrong = await admin('set-limits', '--workspace', workspaceId, '--secrets', 'lots');
      expect(wrong.code).to.equal(2);
      expect(wrong.stderr).to.include('--secrets must be a whole number, "unlimited" or "default"');
      const none = await admin('set-limits', '--workspace', 'no-such-workspace', '--secrets', '1');
      expect(none.code).to.equal(2);
      expect(none.stderr).to.include("No workspace 'no-such-workspace'");
    });

    it('keeps a workspace at WORKSPACE_MAX_CONSOLE_SESSIONS sessions: a new sign-in ends the oldest', async () => {
      const { key } = await service.newWorkspace(['read']);
      const signIn = async () => {
        const res = await fetch(`${service.url}/console/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: key }),
        });
        expect(res.status).to.equal(201);
        return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
      };
      const status = async (cookie: string) =>
        (await fetch(`${service.url}/console/session`, { headers: { cookie } })).status;
      const cookies: string[] = [];
      for (let i = 0; i < 4; i++) cookies.push(await signIn());
      expect(await Promise.all(cookies.map(status))).to.deep.equal([401, 200, 200, 200]);
      // Another workspace's sign-ins end none of these.
      const other = await service.newWorkspace(['read']);
      for (let i = 0; i < 3; i++) {
        await fetch(`${service.url}/console/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: other.key }),
        });
      }
      expect(await Promise.all(cookies.slice(1).map(status))).to.deep.equal([200, 200, 200]);
    });
  });
});
