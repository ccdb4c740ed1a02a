// How far a long-running process (serve, worker) lets V8's heap grow past what is live. V8 picks the
// growth itself, up to 4× the live heap when GC is cheap, which under serve's load is most of the time:
// 35 MB live became a 150 MB heap that Node does not give back. 1.5× costs more frequent major GCs: no
// change in serve's throughput, a somewhat higher p99 under full load (docs/benchmarks.md).
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/** Bounds heap growth to HEAP_GROWING_PERCENT unless node was started with its own value; true when it set it. */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
