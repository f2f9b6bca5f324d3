/** When a sleep step wakes (workers/activities/sleep.ts) and the RFC 3339 times it reads (core/time.ts). */
import { expect } from 'chai';
import { parseRfc3339 } from '../../core/time';
import { wakeTime } from '../../workers/activities/sleep';

const NOW = Date.parse('2026-11-26T08:00:00.000Z');
const DAY = 86_400_000;

describe('RFC 3339 times', () => {
  it('reads UTC and offset times, with or without fractions', () => {
    expect(parseRfc3339('2026-12-01T09:00:00Z')).to.equal(Date.parse('2026-12-01T09:00:00Z'));
    expect(parseRfc3339('2026-12-01t09:00:00z')).to.equal(Date.parse('2026-12-01T09:00:00Z'));
    expect(parseRfc3339('2026-12-01T10:30:00.5+01:30')).to.equal(Date.parse('2026-12-01T09:00:00.500Z'));
    expect(parseRfc3339('2026-12-01T09:00:00.123456789-00:00')).to.equal(
      Date.parse('2026-12-01T09:00:00.123Z'),
    );
    expect(parseRfc3339('2028-02-29T00:00:00Z')).to.equal(Date.parse('2028-02-29T00:00:00Z'));
    // Years below 100 stay what they say (Date.UTC alone would read 0050 as 1950).
    expect(parseRfc3339('0050-01-01T00:00:00Z')).to.equal(Date.parse('0050-01-01T00:00:00Z'));
  });

  it('refuses what is not an RFC 3339 date-time, days that do not exist included', () => {
    for (const text of [
      '2026-12-01',
      '2026-12-01T09:00:00',
      '2026-12-01T09:00Z',
      '2026-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-12-01T24:00:00Z',
      '2026-12-01T23:60:00Z',
      '2026-12-01T23:59:60Z',
      '2026-12-01T09:00:00+24:00',
      'Tue, 01 Dec 2026 09:00:00 GMT',
      ' 2026-12-01T09:00:00Z',
      '1764579600000',
    ]) {
      expect(parseRfc3339(text), text).to.equal(undefined);
    }
  });
});

describe('sleep wake times', () => {
  const step = { id: 'pause', kind: 'sleep' as const };

  it('wakes a duration after the step starts', () => {
    expect(wakeTime(step, { duration: '3d' }, NOW)).to.deep.equal({ at: NOW + 3 * DAY });
  });

  it('wakes at `until`, in the past too (the step then goes on at once)', () => {
    expect(wakeTime(step, { until: '2026-11-26T09:00:00+01:00' }, NOW)).to.deep.equal({ at: NOW });
    expect(wakeTime(step, { until: '2020-01-01T00:00:00Z' }, NOW)).to.deep.equal({
      at: Date.parse('2020-01-01T00:00:00Z'),
    });
  });

  it('takes an until exactly 365 days ahead and fails one later with sleep_too_long', () => {
    const limit = new Date(NOW + 365 * DAY).toISOString();
    expect(wakeTime(step, { until: limit }, NOW)).to.deep.equal({ at: NOW + 365 * DAY });
    const later = new Date(NOW + 365 * DAY + 1).toISOString();
    expect(wakeTime(step, { until: later }, NOW)).to.have.nested.property('error.code', 'sleep_too_long');
  });

  it('fails with invalid_time, saying what it got, for an until that is not a time', () => {
    const cases: [unknown, string][] = [
      ['soon', '"soon"'],
      [1764579600000, 'the number 1764579600000'],
      [null, 'nothing (null)'],
      [{ at: 'x' }, 'an object'],
      [['2026-12-01T09:00:00Z'], 'an array'],
      ['x'.repeat(100), 'a string of 100 characters'],
    ];
    for (const [until, said] of cases) {
      const wake = wakeTime(step, { until }, NOW);
      expect(wake, JSON.stringify(until)).to.have.nested.property('error.code', 'invalid_time');
      expect((wake as { error: { message: string } }).error.message).to.include(`gave ${said}.`);
    }
  });
});
