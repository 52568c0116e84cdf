/**
 * The replica's structured events for the process log (reload errors, store trouble, counters kept
 * or lost): one signature for the replica and the parts it is made of.
 */
export type ProcessLog = (
  level: 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;
