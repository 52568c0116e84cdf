/**
 * Forwards to logs/error-log.ts for engine-hook.ts, which still imports the error log from here;
 * goes once that import points at logs/.
 */
export { connectionNumber, ErrorLog, requestLogContext } from './logs/error-log.ts';
