/** LOG_FORMAT (docs/configuration.md): readable lines in a terminal or when asked, JSON lines otherwise. */
import { PassThrough } from 'node:stream';
import vm from 'node:vm';
import { expect } from 'chai';
import { loadConfig } from '../../platform/config';
import { createLogger, resolveLogFormat, type LogFormat } from '../../platform/logger';

function capture(
  format: LogFormat,
  isTty: boolean,
): { lines: () => string[]; log: ReturnType<typeof createLogger> } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  const log = createLogger('info', { role: 'test' }, { format, destination: stream, isTty });
  return { log, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

describe('logs: format', () => {
  it('auto is readable in a terminal and JSON otherwise; json and pretty are what they say', () => {
    expect(resolveLogFormat('auto', true)).to.equal('pretty');
    expect(resolveLogFormat('auto', false)).to.equal('json');
    expect(resolveLogFormat('json', true)).to.equal('json');
    expect(resolveLogFormat('pretty', false)).to.equal('pretty');
    expect(loadConfig({}).logFormat).to.equal('auto');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).to.equal('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).to.throw(/LOG_FORMAT/);
  });

  it('writes JSON lines when not on a terminal', async () => {
    const { log, lines } = capture('auto', false);
    log.info({ requestId: 'req_1', status: 201 }, 'request');
    await new Promise((resolve) => setImmediate(resolve));
    const [line] = lines();
    const parsed = JSON.parse(line!) as Record<string, unknown>;
    expect(parsed).to.include({ msg: 'request', requestId: 'req_1', status: 201, role: 'test', level: 30 });
  });

  it('writes an error logged under `error` (as the Temporal SDK does) with its message, also from a sandbox', async () => {
    const { log, lines } = capture('json', false);
    log.warn({ error: new Error('boom') }, 'Workflow failed');
    // Workflow code runs in a vm context: its errors are not instances of this realm's Error.
    log.warn(
      { error: vm.runInNewContext('new TypeError("from the sandbox")') as unknown },
      'Workflow failed',
    );
    await new Promise((resolve) => setImmediate(resolve));
    const errors = lines().map((line) => (JSON.parse(line) as { error: Record<string, unknown> }).error);
    expect(errors[0]).to.include({ type: 'Error', message: 'boom' });
    expect(errors[1]).to.include({ message: 'from the sandbox' });
    expect(errors[1]!['stack']).to.be.a('string');
  });

  it('writes one readable line per entry on a terminal: time, level, message, fields, no JSON', async () => {
    const { log, lines } = capture('auto', true);
    log.info({ requestId: 'req_1', status: 201 }, 'request');
    log.warn({ key: 'sk_secret' }, 'careful');
    await new Promise((resolve) => setImmediate(resolve));
    const [first, second] = lines();
    expect(first).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*request/);
    expect(first).to.contain('req_1').and.contain('201');
    expect(() => JSON.parse(first!) as unknown).to.throw();
    expect(second).to.match(/WARN/);
    expect(second).not.to.contain('sk_secret');
  });
});
