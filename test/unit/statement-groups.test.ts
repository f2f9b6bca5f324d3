/**
 * Group commit for the gates' statements (platform/store/statement-groups.ts), over a stand-in statement
 * that records the groups it is sent: a lone request goes alone, those that arrive while a group is in
 * flight go together next, at most `inFlight` groups are sent at once, and one request's error is its own.
 */
import { expect } from 'chai';
import { databaseUnavailable } from '../../platform/errors';
import { groupedStatement } from '../../platform/store/statement-groups';

/** A statement that doubles numbers, answering each group when `release()` is called. */
function heldStatement(fail?: (group: readonly number[]) => Error | undefined) {
  const groups: number[][] = [];
  let sending = 0;
  let most = 0;
  const pending: (() => void)[] = [];
  const run = async (group: readonly number[]) => {
    groups.push([...group]);
    sending += 1;
    most = Math.max(most, sending);
    await new Promise<void>((resolve) => pending.push(resolve));
    sending -= 1;
    const error = fail?.(group);
    if (error) throw error;
    return group.map((n) => n * 2);
  };
  return {
    run,
    groups,
    most: () => most,
    /** Answers every group sent so far. */
    release: () => pending.splice(0).forEach((resolve) => resolve()),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Answers groups as they come until `done` settles. */
async function answerUntil<T>(statement: ReturnType<typeof heldStatement>, done: Promise<T>): Promise<T> {
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => undefined);
  while (!finished) {
    await turn();
    statement.release();
  }
  return done;
}

describe('statement groups (group commit)', () => {
  it('sends a lone request alone, at once', async () => {
    const statement = heldStatement();
    const double = groupedStatement(statement.run);
    const answer = double(1);
    await turn();
    expect(statement.groups).to.deep.equal([[1]]);
    statement.release();
    expect(await answer).to.equal(2);
  });

  it('sends the requests that arrive while a group is in flight together, in the next group', async () => {
    const statement = heldStatement();
    const double = groupedStatement(statement.run);
    const first = double(1);
    await turn();
    const later = [double(2), double(3), double(4)];
    await turn();
    expect(statement.groups, 'the later ones wait for the first group').to.deep.equal([[1]]);
    const answers = await answerUntil(statement, Promise.all([first, ...later]));
    expect(answers).to.deep.equal([2, 4, 6, 8]);
    expect(statement.groups).to.deep.equal([[1], [2, 3, 4]]);
  });

  it('sends at most `inFlight` groups at once', async () => {
    const statement = heldStatement();
    const double = groupedStatement(statement.run, 2);
    const answers: Promise<number>[] = [];
    for (let n = 0; n < 6; n++) {
      answers.push(double(n));
      await turn();
    }
    expect(await answerUntil(statement, Promise.all(answers))).to.deep.equal([0, 2, 4, 6, 8, 10]);
    expect(statement.most(), 'groups in flight at once').to.equal(2);
  });

  it("fails only the request whose own statement fails, when a group's statement fails", async () => {
    const statement = heldStatement((group) => (group.includes(13) ? new Error('bad row 13') : undefined));
    const double = groupedStatement(statement.run);
    const blocker = double(0);
    await turn();
    const [good, bad] = [double(1), double(13)];
    const settled = await answerUntil(statement, Promise.allSettled([blocker, good, bad]));
    expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected']);
    expect((settled[2] as PromiseRejectedResult).reason.message).to.equal('bad row 13');
    expect(statement.groups, 'the group, then each request alone').to.deep.include.members([
      [1, 13],
      [1],
      [13],
    ]);
  });

  it('fails every request of a group the database did not answer, sending none again', async () => {
    const statement = heldStatement((group) =>
      group.length > 0 ? databaseUnavailable(new Error('gone')) : undefined,
    );
    const double = groupedStatement(statement.run);
    const blocker = double(0);
    await turn();
    const settled = await answerUntil(statement, Promise.allSettled([blocker, double(1), double(2)]));
    expect(settled.map((s) => s.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    expect(statement.groups).to.deep.equal([[0], [1, 2]]);
  });
});
