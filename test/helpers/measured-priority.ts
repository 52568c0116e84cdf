/**
 * Timed comparisons between servers (the replica and nginx side by side) measure the servers, not
 * whatever else the machine runs: the test raises its own scheduling priority before it starts them
 * (they inherit it), so that another job keeping every core busy takes time from neither, and both
 * meet it alike. Without the right to (not root, no CAP_SYS_NICE) it says so and runs as it is: on a
 * machine with free cores the result is the same.
 */
import { setPriority } from 'node:os';

/** The niceness of the test and the servers it starts: above an ordinary job's 0. */
const MEASURED_PRIORITY = -10;

/** Call before starting the servers. */
export function raiseMeasuredPriority(): void {
  try {
    setPriority(MEASURED_PRIORITY);
  } catch (err) {
    console.log(`# running at the usual priority (${(err as Error).message}): another busy job would count`);
  }
}
