import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../platform/config';

describe('configuration', () => {
  it('has the contract defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(3000);
    expect(config.temporal.address).to.equal(undefined);
    expect(config.temporal.namespace).to.equal('default');
    expect(config.temporal.devPort).to.equal(7233);
    expect(config.temporal.uiPort).to.equal(8233);
    expect(config.temporal.retentionDays).to.equal(30);
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.allowPrivateDestinations).to.equal(false);
    expect(config.logLevel).to.equal('info');
    expect(config.bodyLimitBytes).to.equal(1024 * 1024);
    expect(config.rateLimit).to.deep.equal({ perSecond: 50, burst: 100 });
  });

  it('reads the default webhook retry schedule in milliseconds', () => {
    expect(loadConfig({}).webhookRetryScheduleMs).to.deep.equal(
      [5, 300, 1800, 7200, 18000, 36000, 36000].map((s) => s * 1000),
    );
  });

  it('parses a custom webhook retry schedule', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0.5, 1,2' }).webhookRetryScheduleMs).to.deep.equal([
      500, 1000, 2000,
    ]);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).port).to.equal(3000);
  });

  it('lists every invalid variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'abc',
        LOG_LEVEL: 'loud',
        BOOTSTRAP_API_KEY: 'short',
        ALLOW_PRIVATE_DESTINATIONS: 'maybe',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'LOG_LEVEL', 'BOOTSTRAP_API_KEY', 'ALLOW_PRIVATE_DESTINATIONS'])
      expect(problems).to.include(name);
  });
});

describe('configuration: workspace limits', () => {
  it('has the contract defaults: AI tokens unlimited, everything else counted', () => {
    const config = loadConfig({});
    expect(config.workspaceLimits).to.deep.equal({
      workflows: 1000,
      secrets: 500,
      webhook_endpoints: 50,
      api_keys: 100,
      open_executions: 1000,
      steps_per_definition: 200,
      ai_tokens_per_day: null,
    });
    expect(config.workspaceRateLimit).to.deep.equal({ perSecond: 200, burst: 400 });
    expect(config.maxConsoleSessionsPerWorkspace).to.equal(100);
  });

  it('reads a whole number, 0 included, or "unlimited"', () => {
    const config = loadConfig({
      WORKSPACE_MAX_WORKFLOWS: 'unlimited',
      WORKSPACE_MAX_SECRETS: '0',
      WORKSPACE_MAX_AI_TOKENS_PER_DAY: '250000',
    });
    expect(config.workspaceLimits).to.include({ workflows: null, secrets: 0, ai_tokens_per_day: 250000 });
  });

  it('refuses anything else, naming the variable', () => {
    for (const value of ['-1', '2.5', 'lots', 'Unlimited']) {
      expect(() => loadConfig({ WORKSPACE_MAX_API_KEYS: value }), value)
        .to.throw(ConfigError)
        .with.property('problems')
        .that.satisfies((problems: string[]) => problems.some((p) => p.startsWith('WORKSPACE_MAX_API_KEYS')));
    }
  });
});

describe('configuration: workflow-task slots', () => {
  it('gives a worker of its own 40 and a worker beside the API 100 by default', () => {
    const config = loadConfig({});
    expect(config.worker.workflowTaskSlots).to.equal(40);
    expect(config.workerBesideApi.workflowTaskSlots).to.equal(100);
    expect({ ...config.workerBesideApi, workflowTaskSlots: 40 }).to.deep.equal(config.worker);
  });

  it('gives both what WORKER_WORKFLOW_TASK_SLOTS says', () => {
    const config = loadConfig({ WORKER_WORKFLOW_TASK_SLOTS: '60' });
    expect(config.worker.workflowTaskSlots).to.equal(60);
    expect(config.workerBesideApi.workflowTaskSlots).to.equal(60);
  });
});

describe('configuration: worker versioning', () => {
  it('versions workers by default, in a deployment named after the task queue, replacing older builds', () => {
    expect(loadConfig({ TEMPORAL_TASK_QUEUE: 'orders.eu' }).workerVersioning).to.deep.equal({
      deploymentName: 'orders-eu',
      buildId: undefined,
      rollout: 'replace',
    });
  });

  it('takes the deployment, build id and rollout mode from the environment', () => {
    expect(
      loadConfig({ WORKER_DEPLOYMENT_NAME: 'billing', WORKER_BUILD_ID: 'v42', WORKER_ROLLOUT: 'manual' })
        .workerVersioning,
    ).to.deep.equal({ deploymentName: 'billing', buildId: 'v42', rollout: 'manual' });
  });

  it('turns versioning off with WORKER_VERSIONING=false', () => {
    expect(loadConfig({ WORKER_VERSIONING: 'false' }).workerVersioning).to.equal(undefined);
  });

  it('refuses a deployment name with a dot and an unknown rollout mode', () => {
    expect(() => loadConfig({ WORKER_DEPLOYMENT_NAME: 'a.b', WORKER_ROLLOUT: 'yolo' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.satisfies((problems: string[]) =>
        ['WORKER_DEPLOYMENT_NAME', 'WORKER_ROLLOUT'].every((name) => problems.some((p) => p.includes(name))),
      );
  });
});
