// CPU time of processes from /proc (Linux), for the benchmarks that report where the machine's CPU went.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/**
 * CPU seconds the process has used so far, to the nanosecond: the scheduler's run time of each of its threads
 * (`/proc/<pid>/task/<tid>/schedstat`), where `cpuSeconds` counts 10 ms ticks — too coarse for a request of a few
 * milliseconds. Threads that ended are not counted (node's threads live as long as the process).
 */
export function threadCpuSeconds(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between readdir and read.
    }
  }
  return ns / 1e9;
}

/** CPU seconds of every process of the PostgreSQL server (the postmaster and its children). */
export function postgresCpuSeconds(postmaster: number): number {
  let total = cpuSeconds(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(fields[1]) === postmaster) total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The process ended between readdir and read.
    }
  }
  return total;
}

/** The pid of the PostgreSQL postmaster serving a backend (the backend's parent). */
export const postmasterOf = (backendPid: number): number =>
  Number(readFileSync(`/proc/${backendPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
