import { expect } from 'chai';
import { DeadlineError, withDeadline } from '../../platform/store/deadline';

/** What a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('should have been refused');
}

describe('withDeadline', () => {
  it('answers with the work when it answers in time', async () => {
    expect(await withDeadline(Promise.resolve(42), 1000)).to.equal(42);
  });

  it('fails with the work when it fails in time', async () => {
    const error = await rejection(withDeadline(Promise.reject(new Error('database away')), 1000));
    expect((error as Error).message).to.equal('database away');
  });

  it('fails with a DeadlineError when the work has not answered by then', async () => {
    const never = new Promise<number>(() => undefined);
    const error = await rejection(withDeadline(never, 20));
    expect(error).to.be.instanceOf(DeadlineError);
    expect((error as Error).message).to.equal('no answer within 20 ms');
  });

  it('swallows a failure that comes after the deadline', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const late = new Promise<number>((_, reject) => setTimeout(() => reject(new Error('late')), 40));
      expect(await rejection(withDeadline(late, 10))).to.be.instanceOf(DeadlineError);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
