/**
 * `limitswitch replay`'s report: for people, a few lines about the log, then aligned tables; with
 * `--json`, the same as one JSON object (snake_case fields, as simulate's and the Plus API's).
 */
import { LIMIT_REQ_COUNTERS } from '../../engine/limit-req/limit-req-zone.ts';
import type { ReplaySummary } from './replay.ts';
import { STATUS_FIELDS, type StatusCounts } from './replay-tally.ts';

const STATUS_HEADINGS: Record<(typeof STATUS_FIELDS)[number], string> = {
  requests: 'requests',
  not_limited: 'not limited',
  passed: 'passed',
  delayed: 'delayed',
  rejected: 'rejected',
  delayed_dry_run: 'delayed (dry run)',
  rejected_dry_run: 'rejected (dry run)',
};

/** The whole report, ending in a newline. */
export function renderReplayText(summary: ReplaySummary, accessLog: string): string {
  const out: string[] = [];
  const time = summary.time;
  const clock =
    time.resolutionMs === 1
      ? '$msec: 1 ms'
      : `$${time.field}: 1 s, ${time.sameSecond === 'spread' ? 'spread over each second' : 'each second at its start'}`;
  out.push(
    `replayed ${summary.totals.requests} requests of ${lines(summary.lines)} from ${accessLog} (log_format ${summary.logFormat}, ${clock})`,
  );
  const switches = summary.switches.map((s) => `${s.zone}:${s.key}=${s.value}`);
  out.push(`switches: ${switches.length === 0 ? 'none (as the config starts)' : switches.join(' ')}`);
  if (summary.unloggedVariables.length !== 0) {
    out.push(
      `note: the limits read ${summary.unloggedVariables.join(', ')}, which log_format ${summary.logFormat} does not have: replayed as empty`,
    );
  }
  if (summary.fromTime !== null) out.push(`from ${summary.fromTime} to ${summary.toTime}`);
  if (summary.skipped !== 0) out.push(`skipped: ${lines(summary.skipped)} without a request line`);
  if (summary.late !== 0)
    out.push(`late: ${summary.late} requests logged too late to replay at their own time`);
  if (summary.badLines.count !== 0) {
    out.push(`unreadable: ${lines(summary.badLines.count)}`);
    for (const bad of summary.badLines.first)
      out.push(`  line ${bad.line}: ${bad.reason}: ${printable(bad.text)}`);
  }

  out.push('', 'limit_req zones');
  out.push(
    table(
      ['zone', ...LIMIT_REQ_COUNTERS.map((f) => STATUS_HEADINGS[f])],
      Object.entries(summary.zones).map(([name, counters]) => [
        name,
        ...LIMIT_REQ_COUNTERS.map((f) => counters[f]),
      ]),
    ),
  );
  out.push('', 'locations');
  out.push(
    table(
      ['server', 'location', ...STATUS_FIELDS.map((f) => STATUS_HEADINGS[f])],
      summary.locations.map((l) => [l.server === '' ? '""' : l.server, l.location, ...statusCells(l)]),
    ),
  );
  out.push('', 'top limited clients');
  out.push(
    summary.topLimitedClients.length === 0
      ? '(none)'
      : table(
          ['client', 'rejected', 'rejected (dry run)', 'delayed', 'delayed (dry run)'],
          summary.topLimitedClients.map((c) => [
            c.addr,
            c.rejected,
            c.rejected_dry_run,
            c.delayed,
            c.delayed_dry_run,
          ]),
        ),
  );
  out.push('', 'per minute (UTC)');
  out.push(
    table(
      ['minute', ...STATUS_FIELDS.map((f) => STATUS_HEADINGS[f])],
      summary.minutes.map((m) => [m.minute.slice(0, 16).replace('T', ' '), ...statusCells(m)]),
    ),
  );
  return `${out.join('\n')}\n`;
}

function lines(n: number): string {
  return `${n} line${n === 1 ? '' : 's'}`;
}

/** A quoted line as nginx would log its bytes: controls and bytes over 0x7e as `\xHH`. */
function printable(text: string): string {
  return text.replace(
    /[^\x20-\x7e]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`,
  );
}

function statusCells(counts: StatusCounts): number[] {
  return STATUS_FIELDS.map((f) => counts[f]);
}

/** Columns padded to their widest cell: text left-aligned, numbers right-aligned. */
function table(headings: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [headings, ...rows].map((row) => row.map(String));
  const widths = headings.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const numeric = headings.map(
    (_, i) => rows.length !== 0 && rows.every((row) => typeof row[i] === 'number'),
  );
  return cells
    .map((row) =>
      row
        .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The report as JSON: the same figures as the text. */
export function replayJson(summary: ReplaySummary, accessLog: string): unknown {
  return {
    access_log: accessLog,
    log_format: summary.logFormat,
    time: {
      field: summary.time.field,
      resolution_ms: summary.time.resolutionMs,
      same_second: summary.time.sameSecond,
    },
    switches: summary.switches,
    unlogged_variables: summary.unloggedVariables,
    lines: summary.lines,
    requests: summary.totals.requests,
    skipped: summary.skipped,
    late: summary.late,
    bad_lines: summary.badLines,
    from: summary.fromTime,
    to: summary.toTime,
    totals: summary.totals,
    zones: summary.zones,
    locations: summary.locations,
    top_limited_clients: summary.topLimitedClients,
    minutes: summary.minutes,
  };
}
