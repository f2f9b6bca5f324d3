/**
 * The CPU time of a thread, in ms: what the time limits of a workspace's work count (an evaluation's,
 * core/expressions/limits.ts; a compute task's, pool.ts), so that a machine or an event loop busy with
 * other work cannot make it look long. Linux reports it in /proc/.../schedstat (nanoseconds on the CPU,
 * first field); elsewhere there is none, and time limits count the wall clock.
 */
import { closeSync, openSync, readlinkSync, readSync } from 'node:fs';

const buffer = Buffer.alloc(128);

function open(file: string): number | null {
  try {
    const fd = openSync(file, 'r');
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

/** Opened by the thread that reads it: /proc/thread-self describes the thread that opened it. */
let own: number | null | undefined;

/** This thread's CPU clock, or undefined where the platform has none. */
export function threadCpuClock(): (() => number) | undefined {
  own ??= open('/proc/thread-self/schedstat');
  const fd = own;
  return fd === null ? undefined : () => read(fd);
}

/** The calling thread's id in the operating system (Linux), which another thread passes to threadCpuClockOf. */
export function osThreadId(): number | undefined {
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CPU clock of thread `tid` of this process (osThreadId), with a function that closes it; undefined
 * where the platform has none.
 */
export function threadCpuClockOf(tid: number): { read: () => number; close: () => void } | undefined {
  const fd = open(`/proc/self/task/${tid}/schedstat`);
  if (fd === null) return undefined;
  // Once closed, the descriptor's number may be another file's: never read or close it again.
  let closed = false;
  let last = 0;
  return {
    read: () => (closed ? last : (last = read(fd))),
    close: () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}
