import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** What /proc (Linux) tells of the benchmark's processes: their memory and CPU time. */

/** The `<field>: <kB> kB` line of a /proc file's text, in MB; null when it has none. */
function kbFieldMb(text: string, field: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${field}:`));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : null;
}

/** A `<field>: <kB> kB` line of a /proc file of a process, in MB; null once it has exited or when it is not ours to read. */
function procKbFieldMb(pid: number, file: string, field: string): number | null {
  try {
    return kbFieldMb(readFileSync(`/proc/${pid}/${file}`, 'utf8'), field);
  } catch {
    return null;
  }
}

/** Resident set size of a process in MB, from /proc (Linux); null once it has exited. */
export const rssMb = (pid: number): number | null => procKbFieldMb(pid, 'status', 'VmRSS');

/**
 * Proportional set size of a process in MB (/proc/<pid>/smaps_rollup, Linux): its own pages, and each page it shares
 * divided among the processes sharing it, so that a group's added up counts shared memory once (PostgreSQL's shared
 * buffers, which every backend maps); and the part of it in shared memory (Pss_Shmem): for PostgreSQL, its shared
 * buffers, a cache of a configured size (shared_buffers) that fills as the tables are read and then stays full. Null
 * once the process has exited.
 *
 * Read once and asynchronously: the kernel walks the process's page tables for it, 5–17 ms for a PostgreSQL backend
 * that mapped the shared buffers or a Temporal server, so a machine's worth of them read at once takes a few hundred ms.
 */
export async function proportionalMemoryMb(pid: number): Promise<{ pss: number; shmem: number } | null> {
  try {
    const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    const pss = kbFieldMb(text, 'Pss');
    return pss === null ? null : { pss, shmem: kbFieldMb(text, 'Pss_Shmem') ?? 0 };
  } catch {
    return null;
  }
}

/**
 * A process's parent, its process group and its utime + stime from /proc (Linux), in seconds (clock ticks of 1/100 s);
 * null once it has exited.
 */
export function procStat(pid: number): { ppid: number; pgrp: number; cpuSeconds: number } | null {
  try {
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { ppid: Number(fields[1]), pgrp: Number(fields[2]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
  } catch {
    return null;
  }
}

/** CPU seconds used so far by `roots` and every process under them (/proc, Linux). */
export function treeCpuSeconds(roots: number[]): number {
  const children = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat) continue;
    cpu.set(Number(entry), stat.cpuSeconds);
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  let total = 0;
  const pending = [...roots];
  while (pending.length) {
    const pid = pending.pop()!;
    total += cpu.get(pid) ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** The dev servers this process started (the Temporal CLI's `server start-dev`, a child of the SDK's core in this process). */
export function devServerPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('start-dev')) continue;
    } catch {
      continue;
    }
    for (let pid = Number(entry), depth = 0; pid > 1 && depth < 5; pid = procStat(pid)?.ppid ?? 0, depth++) {
      if (pid === process.pid) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}

/** CPU seconds used so far by the dev server this run started; none when the run uses TEMPORAL_ADDRESS. */
export function devServerCpu(): Record<string, number> {
  const pids = devServerPids();
  return pids.length ? { 'dev server': treeCpuSeconds(pids) } : {};
}

/**
 * CPU seconds used so far by each thread of a process, added up by thread name (/proc/<pid>/task: the main thread and
 * a worker thread are both "node"; V8's helpers "V8 DefaultWorke"; the Temporal SDK's Rust core "tokio-runtime-w"; the
 * main thread is told apart as "main").
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const byName: Record<string, number> = {};
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName[name] = (byName[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return byName;
}
