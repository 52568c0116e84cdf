/**
 * The replica's structured events for the process log (reload errors, store trouble, counters kept
 * or lost): one signature for the replica and the parts it is made of.
 */
export type ProcessLogLevel = 'info' | 'warn' | 'error';

export type ProcessLog = (level: ProcessLogLevel, message: string, fields?: Record<string, unknown>) => void;
