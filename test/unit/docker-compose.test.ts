/**
 * docker-compose.yml, Dockerfile and .dockerignore, checked by reading them (no Docker engine needed):
 * the services of the production shape, environment names the service really reads, addresses and
 * ports that agree with the configuration, commands that run files the build produces, and
 * healthchecks and start order that hold together. Values are read as a fresh `docker compose up`
 * sees them: `${VAR:-default}` resolves to its default.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../platform/config';
import { consoleDirectory, migrationsDirectory, projectRoot, workflowBundlePath } from '../../platform/paths';
import { TEMPORAL_ENVCONFIG_VARIABLES } from '../../platform/temporal/connection';
import { SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import { metrics } from '../../platform/observability/metrics';
import { OTEL_VARIABLES } from '../../platform/observability/tracing';
import { dashboardMetrics, DASHBOARD_PATH, readDashboard } from '../support/dashboard';
import {
  cmdOf,
  copiesOf,
  parseDockerfile,
  places,
  runsOf,
  workdirOf,
  type CopiedPath,
  type Stage,
} from '../support/dockerfile';

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number | string; published?: number | string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  restart?: string;
}

interface ComposeFile {
  services: Record<string, Service>;
}

const APP_SERVICES = ['api', 'worker'] as const;
const REQUIRED_SERVICES = ['postgresql', 'temporal', 'temporal-ui', 'api', 'worker'];
const NAMESPACE_SETUP = 'temporal-namespace-setup';
const TEMPORAL_FRONTEND_DEFAULT_PORT = 7233;
const POSTGRES_DEFAULT_PORT = 5432;
const CONDITIONS = ['service_started', 'service_healthy', 'service_completed_successfully'];

function readProjectFile(name: string): string {
  return fs.readFileSync(path.join(projectRoot, name), 'utf8');
}

/** Compose interpolation with an empty environment: defaults apply, `$$` is a literal `$`. */
function interpolate(value: string): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (match, _name: string | undefined, operator: string | undefined, operand: string | undefined) =>
      match === '$$' ? '$' : operator?.endsWith('-') ? (operand ?? '') : '',
  );
}

function environmentOf(service: Service): Record<string, string> {
  const raw = service.environment ?? {};
  const entries: [string, string][] = Array.isArray(raw)
    ? raw.map((item) => {
        const [name = '', ...rest] = item.split('=');
        return [name, rest.join('=')];
      })
    : Object.entries(raw).map(([name, value]) => [name, value === null ? '' : String(value)]);
  return Object.fromEntries(entries.map(([name, value]) => [name, interpolate(value)]));
}

function dependenciesOf(service: Service): Record<string, string> {
  const raw = service.depends_on ?? [];
  if (Array.isArray(raw)) return Object.fromEntries(raw.map((name) => [name, 'service_started']));
  return Object.fromEntries(
    Object.entries(raw).map(([name, options]) => [name, options.condition ?? 'service_started']),
  );
}

/** Container-side ports of `ports:` in short ("[ip:][host:]container[/proto]") or long syntax. */
function containerPortsOf(service: Service): number[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return Number(interpolate(String(port.target)));
    const withoutProtocol = interpolate(String(port)).split('/')[0]!;
    return Number(withoutProtocol.split(':').pop());
  });
}

function hasHealthcheck(service: Service): boolean {
  const test = service.healthcheck?.test;
  const disabled = service.healthcheck?.disable === true || (Array.isArray(test) && test[0] === 'NONE');
  return test !== undefined && !disabled;
}

function hostAndPort(address: string): { host: string; port: number } {
  const separator = address.lastIndexOf(':');
  return { host: address.slice(0, separator), port: Number(address.slice(separator + 1)) };
}

describe('docker-compose.yml and Dockerfile', () => {
  let services: Record<string, Service>;
  let stages: Stage[];
  let runtime: Stage;

  const service = (name: string): Service => {
    const found = services[name];
    if (!found) throw new Error(`docker-compose.yml has no service "${name}"`);
    return found;
  };
  const stageNamed = (name: string | undefined): Stage | undefined =>
    stages.find((stage) => stage.name === name);
  /**
   * The COPY of the runtime stage that puts `file` (relative to the project, or to the WORKDIR of the
   * stage it is copied from) at the same place under the runtime WORKDIR.
   */
  const runtimeCopyOf = (file: string): CopiedPath | undefined => {
    const target = path.posix.join(workdirOf(runtime), file);
    return copiesOf(runtime).find((copy) => {
      const source = copy.from === undefined ? undefined : stageNamed(copy.from);
      const sourcePath = source ? path.posix.join(workdirOf(source), file) : file;
      return places(copy, sourcePath, target);
    });
  };
  const commandOf = (name: string): string[] => {
    const command = service(name).command;
    if (command === undefined) return cmdOf(runtime);
    return Array.isArray(command) ? command : command.split(/\s+/).filter(Boolean);
  };
  /** One-shot jobs: services that others wait on to complete. */
  const oneShotJobs = (): Set<string> =>
    new Set(
      Object.values(services).flatMap((s) =>
        Object.entries(dependenciesOf(s))
          .filter(([, condition]) => condition === 'service_completed_successfully')
          .map(([name]) => name),
      ),
    );

  before(() => {
    services = (parse(readProjectFile('docker-compose.yml'), { merge: true }) as ComposeFile).services;
    stages = parseDockerfile(readProjectFile('Dockerfile'));
    runtime = stages[stages.length - 1]!;
  });

  describe('services', () => {
    it('has the postgresql, temporal, temporal-ui, api and worker services', () => {
      const missing = REQUIRED_SERVICES.filter((name) => !services[name]);
      expect(missing, `missing services: ${missing.join(', ')}`).to.deep.equal([]);
    });

    it('builds the API and the worker from the Dockerfile, as one image', () => {
      for (const name of APP_SERVICES) {
        const { build } = service(name);
        expect(build, `${name} has no build section`).to.not.equal(undefined);
        const context = typeof build === 'string' ? build : (build!.context ?? '.');
        const dockerfile = typeof build === 'string' ? 'Dockerfile' : (build!.dockerfile ?? 'Dockerfile');
        expect(path.resolve(projectRoot, context), `${name} build context`).to.equal(projectRoot);
        expect(fs.existsSync(path.join(projectRoot, context, dockerfile)), `${name} builds ${dockerfile}`).to
          .be.true;
      }
      const [api, worker] = [service('api'), service('worker')];
      const sameImage = api.image !== undefined && api.image === worker.image;
      const sameBuild = JSON.stringify(api.build) === JSON.stringify(worker.build);
      expect(sameImage || sameBuild, 'api and worker should share one image (same image name or build)').to.be
        .true;
    });
  });

  describe('environment of the API and the worker', () => {
    it('uses only variable names that the service reads', () => {
      const known = new Set<string>([
        ...CONFIG_VARIABLES,
        ...TEMPORAL_ENVCONFIG_VARIABLES,
        ...OTEL_VARIABLES,
      ]);
      for (const name of APP_SERVICES) {
        const unknown = Object.keys(environmentOf(service(name))).filter((variable) => !known.has(variable));
        expect(
          unknown,
          `${name} sets variables the service never reads: ${unknown.join(', ')}`,
        ).to.deep.equal([]);
      }
    });

    it('holds values the configuration accepts', () => {
      for (const name of APP_SERVICES) {
        expect(() => loadConfig(environmentOf(service(name))), `${name} environment`).to.not.throw();
      }
    });

    it('sets DATABASE_URL and TEMPORAL_ADDRESS, without which the production entrypoints refuse to start', () => {
      for (const name of APP_SERVICES) {
        const config = loadConfig(environmentOf(service(name)));
        expect(config.databaseUrl, `${name} DATABASE_URL`).to.be.a('string');
        expect(config.temporal.address, `${name} TEMPORAL_ADDRESS`).to.be.a('string');
      }
    });

    it('gives both the same database, Temporal target, task queue and SECRETS_KEY', () => {
      const api = environmentOf(service('api'));
      const worker = environmentOf(service('worker'));
      for (const variable of [
        'DATABASE_URL',
        'TEMPORAL_ADDRESS',
        'TEMPORAL_NAMESPACE',
        'TEMPORAL_TASK_QUEUE',
        'SECRETS_KEY',
      ]) {
        expect(worker[variable], `worker ${variable} should equal api ${variable}`).to.equal(api[variable]);
      }
      // Unset, each container would generate its own key, and the worker could not open the API's secrets;
      // a default would be a public key. Compose refuses to start without one (`${SECRETS_KEY:?...}`).
      const raw = (service('api').environment as Record<string, string>)['SECRETS_KEY'];
      expect(raw, 'api SECRETS_KEY must be required, without a default').to.match(/^\$\{SECRETS_KEY:\?.+\}$/);
      expect((service('worker').environment as Record<string, string>)['SECRETS_KEY']).to.equal(raw);
    });

    it('encrypts step data in Temporal: one PAYLOAD_ENCRYPTION_KEYS for both, required, decoded by Temporal UI through the API', () => {
      const raw = (name: string) =>
        (service(name).environment as Record<string, string>)['PAYLOAD_ENCRYPTION_KEYS'];
      expect(raw('api'), 'api PAYLOAD_ENCRYPTION_KEYS').to.match(/^\$\{PAYLOAD_ENCRYPTION_KEYS:\?.+\}$/);
      expect(raw('worker')).to.equal(raw('api'));
      const ui = environmentOf(service('temporal-ui'));
      const api = environmentOf(service('api'));
      const apiPort = loadConfig(api).port;
      expect(ui['TEMPORAL_CODEC_ENDPOINT']).to.equal(`http://127.0.0.1:${apiPort}/codec`);
      expect(ui['TEMPORAL_CODEC_INCLUDE_CREDENTIALS']).to.equal('true');
      // The UI's published address is the origin the codec endpoint answers (TEMPORAL_UI_URL).
      const [uiPort] = (service('temporal-ui').ports ?? []).map((port) =>
        typeof port === 'object' ? '' : String(port).split(':').slice(0, 2).join(':'),
      );
      expect(api['TEMPORAL_UI_URL']).to.equal(`http://${uiPort}`);
    });
  });

  describe('addresses and ports', () => {
    it('publishes the port the API listens on', () => {
      const api = service('api');
      const listening = loadConfig(environmentOf(api)).port;
      expect(containerPortsOf(api), `api should publish container port ${listening}`).to.include(listening);
    });

    it('points TEMPORAL_ADDRESS at the temporal service and its frontend port', () => {
      const frontendPort = Number(
        environmentOf(service('temporal'))['FRONTEND_GRPC_PORT'] ?? TEMPORAL_FRONTEND_DEFAULT_PORT,
      );
      for (const name of [...APP_SERVICES, 'temporal-ui', NAMESPACE_SETUP]) {
        const address = environmentOf(service(name))['TEMPORAL_ADDRESS'] ?? '';
        expect(hostAndPort(address), `${name} TEMPORAL_ADDRESS "${address}"`).to.deep.equal({
          host: 'temporal',
          port: frontendPort,
        });
      }
    });

    it('points DATABASE_URL at the postgresql service, its credentials and its database', () => {
      const postgres = environmentOf(service('postgresql'));
      const url = new URL(environmentOf(service('api'))['DATABASE_URL']!);
      expect(url.hostname, 'DATABASE_URL host').to.equal('postgresql');
      expect(Number(url.port || POSTGRES_DEFAULT_PORT), 'DATABASE_URL port').to.equal(POSTGRES_DEFAULT_PORT);
      expect(decodeURIComponent(url.username), 'DATABASE_URL user').to.equal(postgres['POSTGRES_USER']);
      expect(decodeURIComponent(url.password), 'DATABASE_URL password').to.equal(
        postgres['POSTGRES_PASSWORD'],
      );
      expect(url.pathname.slice(1), 'DATABASE_URL database (created by POSTGRES_DB)').to.equal(
        postgres['POSTGRES_DB'],
      );
    });

    it("keeps the service's database apart from Temporal's databases", () => {
      const temporal = environmentOf(service('temporal'));
      const temporalDatabases = [
        temporal['DBNAME'] ?? 'temporal',
        temporal['VISIBILITY_DBNAME'] ?? 'temporal_visibility',
      ];
      const appDatabase = new URL(environmentOf(service('api'))['DATABASE_URL']!).pathname.slice(1);
      expect(temporalDatabases, `the service's database "${appDatabase}"`).to.not.include(appDatabase);
    });
  });

  describe('commands', () => {
    const sourceOf = (script: string): string => {
      const { compilerOptions } = JSON.parse(readProjectFile('tsconfig.json')) as {
        compilerOptions: { outDir: string; rootDir: string };
      };
      const relative = path.posix.relative(compilerOptions.outDir, script);
      expect(relative.startsWith('..'), `${script} is not under the build output folder`).to.be.false;
      return path.posix.join(compilerOptions.rootDir, relative).replace(/\.js$/, '.ts');
    };

    for (const [name, expected] of [
      ['api', 'processes/api-main.ts'],
      ['worker', 'processes/worker-main.ts'],
    ] as const) {
      it(`runs ${expected} (compiled) in the ${name} service`, () => {
        const command = commandOf(name);
        expect(command[0], `${name} command`).to.equal('node');
        const script = command.find((arg) => arg.endsWith('.js'));
        expect(script, `${name} command runs no .js file: ${command.join(' ')}`).to.be.a('string');
        const source = sourceOf(script!);
        expect(source, `${name} runs ${script}`).to.equal(expected);
        expect(fs.existsSync(path.join(projectRoot, source)), `${source} exists`).to.be.true;
      });
    }
  });

  describe('healthchecks and start order', () => {
    it('gives every long-running service a healthcheck, except the worker', () => {
      const jobs = oneShotJobs();
      const without = Object.keys(services).filter(
        (name) => name !== 'worker' && !jobs.has(name) && !hasHealthcheck(service(name)),
      );
      expect(without, `services without a healthcheck: ${without.join(', ')}`).to.deep.equal([]);
    });

    it('checks the API with node against /readyz on its own port', () => {
      const api = service('api');
      const test = api.healthcheck?.test;
      expect(Array.isArray(test), 'api healthcheck test should be an exec array').to.be.true;
      const [kind, executable, ...args] = test as string[];
      expect([kind, executable], 'api healthcheck runs node (the slim image has no curl)').to.deep.equal([
        'CMD',
        'node',
      ]);
      const port = loadConfig(environmentOf(api)).port;
      expect(args.join(' '), 'api healthcheck URL').to.include(`:${port}/readyz`);
    });

    it('restarts the worker when it exits (it has no healthcheck)', () => {
      expect(service('worker').restart, 'worker restart policy').to.be.oneOf([
        'always',
        'unless-stopped',
        'on-failure',
      ]);
    });

    it('waits only on existing services, with conditions those services can meet', () => {
      const jobs = oneShotJobs();
      for (const [name, s] of Object.entries(services)) {
        for (const [dependency, condition] of Object.entries(dependenciesOf(s))) {
          const where = `${name} depends_on ${dependency}`;
          expect(services, where).to.have.property(dependency);
          expect(CONDITIONS, `${where}: condition`).to.include(condition);
          if (condition === 'service_healthy')
            expect(hasHealthcheck(service(dependency)), `${where}: it has no healthcheck`).to.be.true;
          if (condition === 'service_completed_successfully')
            expect(service(dependency).restart, `${where}: a job must not restart forever`).to.not.be.oneOf([
              'always',
              'unless-stopped',
            ]);
        }
      }
      expect(
        [...jobs].every((job) => !hasHealthcheck(service(job))),
        'one-shot jobs need no healthcheck',
      ).to.be.true;
    });

    it('starts the API and the worker once PostgreSQL, Temporal and the namespace are ready', () => {
      for (const name of APP_SERVICES) {
        expect(dependenciesOf(service(name)), `${name} depends_on`).to.deep.include({
          postgresql: 'service_healthy',
          temporal: 'service_healthy',
          [NAMESPACE_SETUP]: 'service_completed_successfully',
        });
      }
    });

    it("registers the service's search attributes on the service's namespace before it starts", () => {
      const setup = environmentOf(service(NAMESPACE_SETUP));
      expect(setup['NAMESPACE'], 'namespace set up').to.equal(
        environmentOf(service('api'))['TEMPORAL_NAMESPACE'],
      );
      const normalize = (type: string) => type.replace(/_/g, '').toLowerCase();
      const registered = (setup['SEARCH_ATTRIBUTES'] ?? '')
        .split(/\s+/)
        .filter(Boolean)
        .map((entry) => {
          const [name = '', type = ''] = entry.split('=');
          return `${name}=${normalize(type)}`;
        });
      const expected = SEARCH_ATTRIBUTES.map((key) => `${key.name}=${normalize(key.type)}`);
      expect(registered.sort(), 'SEARCH_ATTRIBUTES should match core/search-attributes.ts').to.deep.equal(
        expected.sort(),
      );
    });
  });

  describe('observability', () => {
    const volumesOf = (name: string) =>
      ((services[name] as Service & { volumes?: string[] }).volumes ?? []).map((volume) => {
        const [source = '', target = ''] = volume.split(':');
        return { source, target };
      });

    it('runs Prometheus, Grafana and Jaeger, each published on loopback only', () => {
      for (const name of ['prometheus', 'grafana', 'jaeger']) {
        expect(services, name).to.have.property(name);
        for (const port of service(name).ports ?? []) {
          const text = typeof port === 'object' ? JSON.stringify(port) : String(port);
          expect(text, `${name} port ${text}`).to.match(/^127\.0\.0\.1:/);
        }
      }
    });

    it('mounts files and folders that exist in the repository', () => {
      for (const name of ['prometheus', 'grafana']) {
        const mounted = volumesOf(name).filter(({ source }) => source.startsWith('./'));
        expect(mounted, `${name} mounts`).to.not.be.empty;
        for (const { source } of mounted)
          expect(fs.existsSync(path.join(projectRoot, source)), `${name} mounts ${source}`).to.be.true;
      }
    });

    it('has Prometheus scrape the API and every worker on their METRICS_PORT, which is not published', () => {
      const mount = volumesOf('prometheus').find(({ target }) => target === '/etc/prometheus/prometheus.yml');
      expect(mount, 'prometheus.yml mounted where Prometheus reads it').to.not.be.undefined;
      const scrape = parse(readProjectFile(mount!.source)) as {
        scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[] }[];
      };
      for (const name of APP_SERVICES) {
        const config = loadConfig(environmentOf(service(name)));
        expect(config.metrics.enabled, `${name} metrics`).to.be.true;
        expect(config.metrics.port, `${name} METRICS_PORT`).to.be.a('number');
        const targets = scrape.scrape_configs.flatMap((job) =>
          (job.dns_sd_configs ?? []).flatMap((sd) => sd.names.map((host) => `${host}:${sd.port}`)),
        );
        expect(targets, `scrape targets`).to.include(`${name}:${config.metrics.port}`);
        expect(containerPortsOf(service(name)), `${name} publishes its metrics port`).to.not.include(
          config.metrics.port,
        );
      }
    });

    it('provisions the Prometheus data source and the dashboard that Grafana loads', () => {
      const mounts = volumesOf('grafana');
      const provisioning = mounts.find(({ target }) => target === '/etc/grafana/provisioning')!;
      const datasources = parse(
        readProjectFile(path.join(provisioning.source, 'datasources/prometheus.yml')),
      ) as { datasources: { uid: string; type: string; url: string }[] };
      expect(datasources.datasources[0]).to.include({
        uid: 'prometheus',
        type: 'prometheus',
        url: 'http://prometheus:9090',
      });
      const providers = parse(
        readProjectFile(path.join(provisioning.source, 'dashboards/switchyard.yml')),
      ) as {
        providers: { options: { path: string } }[];
      };
      const dashboards = mounts.find(({ target }) => target === providers.providers[0]!.options.path);
      expect(dashboards, 'the dashboards folder mounted where the provider reads').to.not.be.undefined;
      expect(path.join(projectRoot, dashboards!.source, 'switchyard.json')).to.equal(DASHBOARD_PATH);
      const dashboard = readDashboard();
      const titles = dashboard.panels.map((panel) => panel.title).join(' | ');
      for (const subject of [
        /Executions\/s by final status/,
        /Step latency by kind/,
        /delivery/i,
        /backlog/i,
      ])
        expect(titles).to.match(subject);
      for (const panel of dashboard.panels)
        for (const target of panel.targets ?? [])
          expect((target as { datasource?: { uid?: string } }).datasource?.uid, panel.title).to.equal(
            'prometheus',
          );
    });

    it("queries only metric names the service exports (the Temporal SDK's are checked against a scrape in test/integration/observability.test.ts)", async () => {
      const ours = new Set((await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name));
      const used = dashboardMetrics();
      expect(used.filter((name) => name.startsWith('switchyard_') && !ours.has(name))).to.deep.equal([]);
      expect(used.every((name) => name.startsWith('switchyard_') || name.startsWith('temporal_'))).to.be.true;
    });

    it('sends traces from the API and the worker to Jaeger over OTLP/HTTP, each with its service name', () => {
      expect(environmentOf(service('jaeger'))['COLLECTOR_OTLP_ENABLED']).to.equal('true');
      const names = new Set<string>();
      for (const name of APP_SERVICES) {
        const env = environmentOf(service(name));
        expect(env['OTEL_EXPORTER_OTLP_ENDPOINT'], name).to.equal('http://jaeger:4318');
        names.add(env['OTEL_SERVICE_NAME'] ?? '');
      }
      expect([...names].sort()).to.deep.equal(['switchyard-api', 'switchyard-worker']);
    });
  });

  describe('Dockerfile', () => {
    it('installs every dependency, then runs npm run build', () => {
      const building = stages.find((stage) => runsOf(stage).some((run) => /\bnpm run build\b/.test(run)));
      expect(building, 'no stage runs `npm run build`').to.not.equal(undefined);
      const runs = runsOf(building!);
      const install = runs.findIndex((run) => /\bnpm ci\b/.test(run) && !/--omit[= ]dev/.test(run));
      const build = runs.findIndex((run) => /\bnpm run build\b/.test(run));
      expect(install, '`npm ci` with dev dependencies should run before `npm run build`')
        .to.be.at.least(0)
        .and.below(build);
    });

    it('copies into the build stage every source folder that tsc compiles and the build context holds', () => {
      const building = stages.find((stage) => runsOf(stage).some((run) => /\bnpm run build\b/.test(run)))!;
      const { include } = JSON.parse(readProjectFile('tsconfig.json')) as { include: string[] };
      const ignored = new Set(
        readProjectFile('.dockerignore')
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line && !line.startsWith('#')),
      );
      const copied = copiesOf(building)
        .filter((copy) => copy.from === undefined)
        .map((copy) => copy.source);
      const missing = include.filter((folder) => !ignored.has(folder) && !copied.includes(folder));
      expect(missing, `folders the build stage does not copy: ${missing.join(', ')}`).to.deep.equal([]);
    });

    it('ships production dependencies only', () => {
      const copy = runtimeCopyOf('node_modules');
      const installer = copy ? stageNamed(copy.from) : runtime;
      expect(installer, 'node_modules comes from no known stage').to.not.equal(undefined);
      expect(
        runsOf(installer!).some((run) => /\bnpm ci\b.*--omit[= ]dev/.test(run)),
        'runtime node_modules should come from `npm ci --omit=dev`',
      ).to.be.true;
    });

    for (const file of [
      'package.json',
      path.relative(projectRoot, migrationsDirectory),
      'dist/processes/api-main.js',
      'dist/processes/worker-main.js',
      path.relative(projectRoot, workflowBundlePath),
      path.relative(projectRoot, consoleDirectory),
    ]) {
      it(`copies ${file} to where the service looks for it`, () => {
        const copy = runtimeCopyOf(file);
        const target = path.posix.join(workdirOf(runtime), file);
        expect(copy, `the runtime stage should copy ${file} to ${target}`).to.not.equal(undefined);
        if (file.startsWith('dist/')) {
          const source = stageNamed(copy!.from);
          expect(
            source !== undefined && runsOf(source).some((run) => /\bnpm run build\b/.test(run)),
            `${file} should come from the stage that runs npm run build`,
          ).to.be.true;
        }
      });
    }

    it('runs as a non-root user', () => {
      const user = runtime.instructions
        .filter((i) => i.keyword === 'USER')
        .pop()
        ?.args.trim();
      expect(user, 'the runtime stage sets no USER').to.be.a('string');
      expect(user!.split(':')[0], 'runtime user').to.not.be.oneOf(['root', '0']);
    });

    it('starts the API by default', () => {
      expect(cmdOf(runtime)).to.deep.equal(['node', 'dist/processes/api-main.js']);
    });
  });

  describe('.dockerignore', () => {
    it('keeps dependencies, build outputs, local state and credentials out of the build context', () => {
      const entries = readProjectFile('.dockerignore')
        .split('\n')
        .map((line) => line.trim().replace(/^\//, '').replace(/\/$/, ''))
        .filter((line) => line && !line.startsWith('#'));
      for (const required of ['node_modules', 'dist', '.data', '.tools', '.git', '.env'])
        expect(entries, `.dockerignore should list ${required}`).to.include(required);
    });
  });
});
