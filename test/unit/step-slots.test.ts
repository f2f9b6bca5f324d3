import { expect } from 'chai';
import { loadConfig, ConfigError } from '../../platform/config';
import { fairnessKeyOf, MAX_FAIRNESS_KEY_BYTES } from '../../core/fairness';
import { WorkspaceStepSlots } from '../../workers/activities/step-slots';

describe("a workspace's share of the worker's step calls", () => {
  it('lets each workspace hold its share, whatever the others hold', () => {
    const slots = new WorkspaceStepSlots(2);
    const a1 = slots.tryAcquire('a');
    const a2 = slots.tryAcquire('a');
    expect(a1 && a2, 'two of a').to.be.a('function');
    expect(slots.tryAcquire('a'), 'a third of a is deferred').to.equal(undefined);
    expect(slots.tryAcquire('b'), 'b still has its share').to.be.a('function');
    a1!();
    expect(slots.tryAcquire('a'), 'a released one: it may take it again').to.be.a('function');
  });

  it('lets a workspace past its share borrow while the worker`s calls in all stay under the borrowing bound', () => {
    const slots = new WorkspaceStepSlots(2, 4);
    const a = [1, 2, 3, 4].map(() => slots.tryAcquire('a'));
    expect(
      a.every((release) => typeof release === 'function'),
      'a: its two, and two borrowed',
    ).to.equal(true);
    expect(slots.tryAcquire('a'), 'a fifth of a: the bound reached').to.equal(undefined);
    const b = [slots.tryAcquire('b'), slots.tryAcquire('b')];
    expect(
      b.every((release) => typeof release === 'function'),
      'b still has its whole share',
    ).to.equal(true);
    expect(slots.tryAcquire('b'), 'b past its share cannot borrow either').to.equal(undefined);
    a[0]!();
    b[0]!();
    expect(slots.tryAcquire('a'), 'still four calls: a may not borrow').to.equal(undefined);
    b[1]!();
    expect(slots.tryAcquire('a'), 'three calls now: a borrows again').to.be.a('function');
  });

  it('counts a release once', () => {
    const slots = new WorkspaceStepSlots(1);
    const release = slots.tryAcquire('a')!;
    release();
    release();
    expect(slots.heldBy('a')).to.equal(0);
    slots.tryAcquire('a');
    expect(slots.tryAcquire('a'), 'the double release freed no second slot').to.equal(undefined);
  });

  it('is configured by WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE, at most WORKER_LOCAL_ACTIVITY_SLOTS', () => {
    expect(loadConfig({}).worker.localCallSlotsPerWorkspace).to.equal(10);
    expect(loadConfig({ WORKER_LOCAL_ACTIVITY_SLOTS: '4' }).worker.localCallSlotsPerWorkspace).to.equal(4);
    expect(
      loadConfig({ WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: '3' }).worker.localCallSlotsPerWorkspace,
    ).to.equal(3);
    expect(() =>
      loadConfig({ WORKER_LOCAL_ACTIVITY_SLOTS: '4', WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: '5' }),
    ).to.throw(ConfigError, /WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE/);
    expect(() => loadConfig({ WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: '0' })).to.throw(ConfigError);
  });
});

describe('fairness keys', () => {
  it("are the workspace's id, or a bounded stand-in for an id too long", () => {
    expect(fairnessKeyOf('acme')).to.equal('acme');
    const long = 'x'.repeat(200);
    const key = fairnessKeyOf(long);
    expect(new TextEncoder().encode(key).length).to.be.at.most(MAX_FAIRNESS_KEY_BYTES);
    expect(fairnessKeyOf(`${long}y`), 'two long ids keep keys of their own').to.not.equal(key);
  });
});
