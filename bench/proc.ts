/**
 * CPU time and memory of processes, read from Linux's /proc: what a benchmark phase cost each process
 * of the stack (the service, the Temporal dev server, a worker), independent of which one did the work.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU milliseconds of a `stat` file's content (a process's or one thread's). */
function statCpuMs(stat: string): number {
  // The command name (field 2) may hold spaces: the fields after it start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** User + system CPU time of a process (all its threads) so far, in milliseconds; 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    return statCpuMs(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return 0;
  }
}

/** A live thread of a process: its name (`comm`, 15 characters at most) and CPU milliseconds so far. */
interface ThreadCpu {
  name: string;
  ms: number;
}

/** The live threads of a process by thread id (the main thread's id is the pid); empty once it is gone. */
export function threadCpuMs(pid: number): Map<number, ThreadCpu> {
  const threads = new Map<number, ThreadCpu>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      threads.set(Number(tid), { name, ms: statCpuMs(stat) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/**
 * What each thread group of a process spent between two readings: `main` (the thread whose id is the
 * pid: a Node process's event loop), the others by thread name, and `exited`, the threads that ended in
 * between (the process's total minus the live threads': /proc keeps no figures of a thread once it ends).
 */
export function threadGroupsMs(
  pid: number,
  before: Map<number, ThreadCpu>,
  after: Map<number, ThreadCpu>,
  processMs: number,
): Record<string, number> {
  const groups: Record<string, number> = { main: 0 };
  let live = 0;
  for (const [tid, thread] of after) {
    const spent = Math.max(0, thread.ms - (before.get(tid)?.ms ?? 0));
    const group = tid === pid ? 'main' : thread.name;
    groups[group] = (groups[group] ?? 0) + spent;
    live += spent;
  }
  const exited = processMs - live;
  if (exited > 0) groups['exited'] = exited;
  return groups;
}

/** Resident memory of a process now, in MiB; 0 once it is gone. */
export function rssMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** The command line of a process, or '' once it is gone. */
export function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/** The live processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/**
 * CPU and peak memory of named processes over a window: start(), then stop() for the figures. With
 * `threads`, also each process's CPU by thread group (threadGroupsMs).
 */
export class ProcessMeter {
  private readonly startCpu = new Map<string, number>();
  private readonly startThreads = new Map<string, Map<number, ThreadCpu>>();
  private readonly peakRss = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pids: Record<string, number>,
    private readonly threads = false,
  ) {}

  start(sampleEveryMs = 200): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      if (this.threads) this.startThreads.set(name, threadCpuMs(pid));
      this.startCpu.set(name, cpuMs(pid));
      this.peakRss.set(name, rssMb(pid));
    }
    this.timer = setInterval(() => this.sample(), sampleEveryMs);
    this.timer.unref();
  }

  /**
   * CPU milliseconds each process spent in the window, and its peak resident memory (MiB); with
   * `threads`, each process's milliseconds by thread group.
   */
  stop(): {
    cpu_ms: Record<string, number>;
    cpu_ms_by_thread: Record<string, Record<string, number>>;
    peak_rss_mb: Record<string, number>;
  } {
    clearInterval(this.timer);
    this.sample();
    const cpu: Record<string, number> = {};
    const byThread: Record<string, Record<string, number>> = {};
    const peak: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const threads = this.threads ? threadCpuMs(pid) : undefined;
      cpu[name] = Math.max(0, cpuMs(pid) - (this.startCpu.get(name) ?? 0));
      if (threads) byThread[name] = threadGroupsMs(pid, this.startThreads.get(name)!, threads, cpu[name]);
      peak[name] = Math.round(this.peakRss.get(name) ?? 0);
    }
    return { cpu_ms: cpu, cpu_ms_by_thread: byThread, peak_rss_mb: peak };
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids))
      this.peakRss.set(name, Math.max(this.peakRss.get(name) ?? 0, rssMb(pid)));
  }
}

/**
 * Sends `signal` to a child process unless it has exited, and waits for its exit (`exited`, a promise
 * made when it started); SIGKILL if it is still there after `graceMs`.
 */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals,
  exited: Promise<void>,
  graceMs = 30_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
