/**
 * Telling the run that crashes the worker from the runs in flight with it (platform/temporal/crash-loop.ts):
 * only an attempt that started while a worker in probation polled, and no other worker, names its run.
 * The whole loop runs against real crashes in test/faults/crash-loop.test.ts.
 */
import { expect } from 'chai';
import {
  probationIdentity,
  probationSince,
  ranInProbation,
  TIMEOUT_LAG_MS,
} from '../../platform/temporal/crash-loop';

const probation = (since: number, lastAccess: number) => ({
  identity: probationIdentity('42@host', since),
  lastAccess,
});
const normal = (lastAccess: number) => ({ identity: '42@host', lastAccess });

describe('crash loops: which run crashed a worker in probation', () => {
  it("reads a probation worker's start from its identity, and nothing from another identity", () => {
    expect(probationSince(probationIdentity('42@host', 1_700_000_000_000))).to.equal(1_700_000_000_000);
    expect(probationSince('42@host')).to.equal(undefined);
    expect(probationSince('42@host/probation/soon')).to.equal(undefined);
  });

  it('names an attempt that started while only a probation worker polled', () => {
    expect(ranInProbation(20_000, [normal(5_000), probation(10_000, 20_000)], 0)).to.equal(true);
  });

  it('does not name an attempt that started before the probation worker polled (a bystander)', () => {
    expect(ranInProbation(9_000, [normal(5_000), probation(10_000, 20_000)], 0)).to.equal(false);
  });

  it('does not name an attempt that a normal worker polling since then may have run', () => {
    expect(ranInProbation(20_000, [normal(20_500), probation(10_000, 20_000)], 0)).to.equal(false);
  });

  it('does not name an attempt when no worker in probation polled', () => {
    expect(ranInProbation(20_000, [normal(5_000)], 0)).to.equal(false);
    expect(ranInProbation(20_000, [], 0)).to.equal(false);
  });

  it('takes a start known only from the timeout as up to TIMEOUT_LAG_MS earlier', () => {
    const pollers = [normal(5_000), probation(10_000, 30_000)];
    expect(ranInProbation(10_000 + TIMEOUT_LAG_MS - 1, pollers, TIMEOUT_LAG_MS)).to.equal(false);
    expect(ranInProbation(10_000 + TIMEOUT_LAG_MS, pollers, TIMEOUT_LAG_MS)).to.equal(true);
  });
});
