/** An error-log line the engine produces as data; the replica adds nginx's prefix and the request's context. */

/** The levels `limit_req_log_level` and `limit_conn_log_level` take. */
export type LogLevel = 'info' | 'notice' | 'warn' | 'error';

export interface LogLine {
  readonly level: LogLevel | 'alert' | 'crit';
  readonly message: string;
}
