// How many worker processes `workers` asks for.
import { availableParallelism } from 'node:os';

/** `auto`: one per CPU this process may use. */
export function workerCount(workers: number | 'auto' | undefined): number {
  return workers === undefined || workers === 'auto' ? availableParallelism() : workers;
}
