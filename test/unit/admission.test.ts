import { expect } from 'chai';
import { AppError } from '../../platform/errors';
import { AdmissionGate } from '../../src/flow-control/admission';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('admission of new executions (embedded process)', () => {
  it('admits up to the limit at once, then makes triggers wait for a place', async () => {
    const gate = new AdmissionGate({ limit: 2, maxWaitMs: 1000 });
    expect(await gate.admit('a')).to.equal(true);
    expect(await gate.admit('b')).to.equal(true);
    let admitted = false;
    const waiting = gate.admit('c').then(() => (admitted = true));
    await tick();
    expect(admitted, 'a third one waits').to.equal(false);
    gate.release('a');
    await waiting;
    expect(gate.inFlight).to.equal(2);
  });

  it('hands places out first in, first out', async () => {
    const gate = new AdmissionGate({ limit: 1, maxWaitMs: 1000 });
    await gate.admit('a');
    const order: string[] = [];
    const waiters = ['b', 'c', 'd'].map((id) => gate.admit(id).then(() => order.push(id)));
    for (const id of ['a', 'b', 'c']) {
      await tick();
      gate.release(id);
    }
    await Promise.all(waiters);
    expect(order).to.deep.equal(['b', 'c', 'd']);
  });

  it('hands places to waiting workspaces in turn, so a flood waits behind itself', async () => {
    const gate = new AdmissionGate({ limit: 2, maxWaitMs: 1000 });
    await gate.admit('a0', 'A');
    await gate.admit('b0', 'B');
    const order: string[] = [];
    const flood = ['a1', 'a2', 'a3'].map((id) => gate.admit(id, 'A').then(() => order.push(id)));
    const other = gate.admit('b1', 'B').then(() => order.push('b1'));
    for (const id of ['a0', 'a1', 'b1', 'a2']) {
      await tick();
      gate.release(id);
    }
    await Promise.all([...flood, other]);
    expect(order, "B's trigger takes the second place freed, not the fourth").to.deep.equal([
      'a1',
      'b1',
      'a2',
      'a3',
    ]);
  });

  it('admits the first run of a workspace holding no place at once, past the limit', async () => {
    const gate = new AdmissionGate({ limit: 1, maxWaitMs: 1000 });
    await gate.admit('a0', 'A');
    const flood = gate.admit('a1', 'A');
    expect(await gate.admit('b1', 'B'), 'B holds nothing: it goes in').to.equal(true);
    expect(gate.inFlight).to.equal(2);
    let secondOfB = false;
    const second = gate.admit('b2', 'B').then(() => (secondOfB = true));
    await tick();
    expect(secondOfB, "B's second run waits its turn").to.equal(false);
    gate.release('b1');
    await tick();
    expect(gate.inFlight, 'a freed place past the limit is not handed on').to.equal(1);
    gate.release('a0');
    await flood;
    gate.release('a1');
    await second;
  });

  it('gives a freed place to the waiting trigger, not to one arriving at the same moment', async () => {
    const gate = new AdmissionGate({ limit: 1, maxWaitMs: 1000 });
    await gate.admit('a');
    const waiting = gate.admit('b');
    gate.release('a');
    const newcomer = gate.admit('c');
    expect(await waiting).to.equal(true);
    expect(gate.inFlight, 'b holds the only place; c waits').to.equal(1);
    gate.release('b');
    expect(await newcomer).to.equal(true);
    expect(gate.inFlight).to.equal(1);
  });

  it('refuses a trigger that waited too long with 429 rate_limited and Retry-After', async () => {
    const gate = new AdmissionGate({ limit: 1, maxWaitMs: 30 });
    await gate.admit('a');
    const error = await gate.admit('b').catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(AppError);
    expect(error).to.include({ status: 429, code: 'rate_limited' });
    expect(Number((error as AppError).headers['Retry-After'])).to.be.at.least(1);
    gate.release('a');
    expect(await gate.admit('c'), 'the refused one took no place').to.equal(true);
  });

  it('counts a repeated request once', async () => {
    const gate = new AdmissionGate({ limit: 1, maxWaitMs: 30 });
    expect(await gate.admit('a')).to.equal(true);
    expect(await gate.admit('a')).to.equal(false);
    expect(gate.inFlight).to.equal(1);
  });

  it('frees a place after holdMs even if nothing releases it', async () => {
    const gate = new AdmissionGate({ limit: 1, maxWaitMs: 1000, holdMs: 20 });
    await gate.admit('a');
    await gate.admit('b');
    expect(gate.inFlight).to.equal(1);
  });
});
