/**
 * The CPU time of the calling thread, in ms: what an evaluation's time limit counts once it runs long
 * (core/expressions/limits.ts), so that other processes on a busy machine cannot make it look long.
 * Linux reports it in /proc/thread-self/schedstat (nanoseconds on the CPU, first field); elsewhere
 * there is none, and time limits count the wall clock.
 */
import { openSync, readSync } from 'node:fs';

/** Opened by the thread that reads it: the file describes the thread that opened it. */
let schedstat: number | null | undefined;
const buffer = Buffer.alloc(128);

function open(): number | null {
  try {
    const fd = openSync('/proc/thread-self/schedstat', 'r');
    return Number.isFinite(read(fd)) ? fd : null;
  } catch {
    return null;
  }
}

function read(fd: number): number {
  const length = readSync(fd, buffer, 0, buffer.length, 0);
  const text = buffer.toString('latin1', 0, length);
  return Number(text.slice(0, text.indexOf(' '))) / 1e6;
}

/** This thread's CPU clock, or undefined where the platform has none. */
export function threadCpuClock(): (() => number) | undefined {
  schedstat ??= open();
  const fd = schedstat;
  return fd === null ? undefined : () => read(fd);
}
