/**
 * The replica's side of the data path's fault boundary (http/fault-boundary.ts): each fault caught
 * there is written to the error log as nginx writes an internal error, at `alert` —
 * `2026/12/04 12:00:00 [alert] 54#54: *7 data path fault in a client callback: TypeError: … at …,
 * client: 192.0.2.7` — and counted (`limitswitch_data_path_faults_total{callback}`). It lives with
 * the logs: writing that line is its one job; the count is the caller's callback.
 */
import { normalizePeerAddress } from '../../engine/net/address-text.ts';
import { type CallbackKind, describe, reportDataPathFaults } from '../http/contract/fault-boundary.ts';
import { connectionNumber, type ErrorLog } from './error-log.ts';

/** Starts reporting this process's data path faults; returns what stops it. */
export function reportFaults(errorLog: ErrorLog, count?: (kind: CallbackKind) => void): () => void {
  return reportDataPathFaults(({ kind, error, client }) => {
    const connection = client === null ? '' : `*${connectionNumber(client)} `;
    const peer = client === null ? '' : `, client: ${normalizePeerAddress(client.remoteAddress)}`;
    errorLog.message(
      'alert',
      `${connection}data path fault in a ${kind} callback: ${describe(error)}${peer}`,
    );
    count?.(kind);
  });
}
