import { expect } from 'chai';
import {
  EXECUTION_ID_PATTERN,
  hookExecutionId,
  newExecutionId,
  scheduledExecutionIdPrefix,
} from '../../platform/ids';

describe('execution ids', () => {
  it('accepts the ids the trigger endpoint makes', () => {
    expect(newExecutionId()).to.match(EXECUTION_ID_PATTERN);
  });

  it('accepts a scheduled run: the schedule prefix and the nominal time Temporal appends', () => {
    const prefix = scheduledExecutionIdPrefix('switchyard:default:nightly');
    expect(`${prefix}-2026-11-21T21:40:00Z`).to.match(EXECUTION_ID_PATTERN);
    expect(`${prefix}-2024-02-29T23:59:59Z`).to.match(EXECUTION_ID_PATTERN);
  });

  it('rejects anything else', () => {
    for (const id of [
      'ex_',
      'ex_abc-def',
      'ex_abc_def',
      'wf_abc',
      'ex_abc-2026-11-21T21:40:00',
      'ex_abc-2026-11-21T21:40:00z',
      'ex_abc-2026-11-21T21:40:00.123Z',
      'ex_abc-2026-11-21T21:40:00+01:00',
      'ex_abc-2026-13-21T21:40:00Z',
      'ex_abc-2026-11-32T21:40:00Z',
      'ex_abc-2026-11-21T24:40:00Z',
      'ex_abc-2026-11-21T21:60:00Z',
      'ex_abc-2026-11-21 21:40:00Z',
      'ex_abc-2026-11-21T21:40:00Z-2026-11-21T21:40:00Z',
      'ex_abc-2026-11-21T21:40:00Z\n',
      `ex_${'a'.repeat(65)}`,
    ]) {
      expect(EXECUTION_ID_PATTERN.test(id), id).to.equal(false);
    }
  });

  it('gives each schedule its own stable prefix of ex_ and 20 base62 characters', () => {
    const a = scheduledExecutionIdPrefix('switchyard:default:nightly');
    expect(a).to.match(/^ex_[A-Za-z0-9]{20}$/);
    expect(scheduledExecutionIdPrefix('switchyard:default:nightly')).to.equal(a);
    expect(scheduledExecutionIdPrefix('switchyard:other:nightly')).not.to.equal(a);
  });

  it('gives a signed inbound request the same id every time, and each other request its own', () => {
    const id = hookExecutionId('default', 'onboard', 'replay-key-1');
    expect(id)
      .to.match(/^ex_[A-Za-z0-9]{24}$/)
      .and.to.match(EXECUTION_ID_PATTERN);
    expect(hookExecutionId('default', 'onboard', 'replay-key-1')).to.equal(id);
    expect(hookExecutionId('default', 'onboard', 'replay-key-2')).not.to.equal(id);
    expect(hookExecutionId('other', 'onboard', 'replay-key-1')).not.to.equal(id);
    expect(hookExecutionId('default', 'offboard', 'replay-key-1')).not.to.equal(id);
  });
});
