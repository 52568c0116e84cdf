/**
 * `limitswitch replay -c FILE --access-log LOG`: what the limits would have done to real traffic with
 * the given switches — an access log's requests replayed through the engine at their logged times.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { buildSite } from '../config/build-site.ts';
import { errnoSuffix, findLogFormat, loadConfigFile } from '../config/index.ts';
import type { HttpConf } from '../config/model.ts';
import { defaultRequestPort } from '../engine/http/served-ports.ts';
import { hasCode, isLimitswitchError, LimitswitchError } from '../shared/errors.ts';
import { AccessLogParser } from './replay/access-log-parser.ts';
import { readLines } from './replay/line-reader.ts';
import { Replay, type Switch } from './replay/replay.ts';
import { renderReplayText, replayJson } from './replay/replay-report.ts';
import type { SameSecond } from './replay/replay-timeline.ts';
import { unloggedVariables } from './replay/unlogged-variables.ts';
import { simulateKeyval } from './simulate.ts';

interface ReplayCommandOptions {
  readonly config: string;
  readonly accessLog: string;
  readonly logFormat: string;
  readonly keyval: string[];
  readonly json?: boolean;
  readonly decisions?: boolean;
  readonly top: string;
  readonly sameSecond: string;
  readonly host?: string;
  readonly port?: string;
}

const HELP = `
Each request is decided by the same engine path as \`limitswitch simulate\`, at the time it came in:
$msec (ms) minus $request_time when the format has them, else $time_local / $time_iso8601 (1 s) with
the lines of one second spread evenly over it in log order (--same-second burst: all at its start).
The switches are set before the first request. Lines that do not parse are counted, and the first
few quoted with their line numbers. Formats: nginx's combined, or any log_format of the config.

Details: docs/replay.md. Example:
  limitswitch replay -c nginx.conf --access-log access.log --keyval limitreq_uri:/coffee=1`;

function usage(text: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_CLI_USAGE', `limitswitch replay: ${text}`);
}

/** `zone:key=value` → a switch (the key may hold `:`; the value may hold `=`). */
export function parseSwitch(text: string): Switch {
  const colon = text.indexOf(':');
  const equals = text.indexOf('=', colon + 1);
  if (colon <= 0 || equals === -1 || equals === colon + 1) {
    throw usage(`--keyval "${text}": expected zone:key=value`);
  }
  return { zone: text.slice(0, colon), key: text.slice(colon + 1, equals), value: text.slice(equals + 1) };
}

/** Checks the switches on a scratch site with simulate's own checks, before the log is read. */
function checkSwitches(http: HttpConf, switches: readonly Switch[]): void {
  const scratch = buildSite(http);
  for (const change of switches) {
    try {
      simulateKeyval(scratch, 0, change);
    } catch (err) {
      if (!hasCode(err, 'RL_ERR_SIMULATE_INPUT')) throw err;
      throw usage(`--keyval "${change.zone}:${change.key}=${change.value}": ${err.message}`);
    }
  }
}

function loadHttp(file: string): HttpConf {
  try {
    return loadConfigFile(file).http;
  } catch (err) {
    if (!hasCode(err, 'RL_ERR_CONFIG_INVALID')) throw err;
    throw new LimitswitchError('RL_ERR_CONFIG_INVALID', `limitswitch: ${err.message}`);
  }
}

function integerOption(name: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw usage(`${name} "${text}": expected ${min}..${max}`);
  return value;
}

async function runReplay(options: ReplayCommandOptions): Promise<void> {
  const http = loadHttp(options.config);
  const format = findLogFormat(http.logFormats, options.logFormat);
  if (format === undefined) {
    const names = ['combined', ...http.logFormats.map((f) => f.name)].join(', ');
    throw usage(`unknown log format "${options.logFormat}" (known: ${names})`);
  }
  if (options.sameSecond !== 'spread' && options.sameSecond !== 'burst') {
    throw usage(`--same-second "${options.sameSecond}": expected spread or burst`);
  }
  const top = integerOption('--top', options.top, 0, 1_000_000);
  const port = options.port === undefined ? undefined : integerOption('--port', options.port, 1, 65535);
  const switches = options.keyval.map(parseSwitch);
  checkSwitches(http, switches);

  const site = buildSite(http);
  const parser = new AccessLogParser(format);
  const pending: string[] = [];
  const replay = new Replay({
    site,
    parser,
    switches,
    unloggedVariables: unloggedVariables(http, parser),
    defaultPort: port ?? defaultRequestPort(site),
    sameSecond: options.sameSecond as SameSecond,
    defaults: { host: options.host, port },
    onDecision: options.decisions
      ? (result) => {
          pending.push(`${JSON.stringify(result)}\n`);
          if (pending.length >= 1024) process.stdout.write(pending.splice(0).join(''));
        }
      : undefined,
  });
  const path = options.accessLog === '-' ? '-' : resolve(options.accessLog);
  try {
    await readLines(path, (text, lineNumber) => replay.line(text, lineNumber));
  } catch (err) {
    if (isLimitswitchError(err)) throw err;
    if ((err as { syscall?: unknown }).syscall === 'open')
      throw usage(`open() "${path}" failed ${errnoSuffix(err)}`);
    throw usage(`cannot read "${path}": ${err instanceof Error ? err.message : String(err)}`);
  }
  const summary = replay.finish(top);
  // A log of which no line could be read was written in another format: an error, not 0 requests.
  if (summary.badLines.count > 0 && summary.badLines.count === summary.lines - summary.skipped) {
    const first = summary.badLines.first[0]!;
    throw usage(
      `no line of "${options.accessLog}" is in log_format ${summary.logFormat} (${summary.badLines.count} unreadable; line ${first.line}: ${first.reason}); give the format it was written in with --log-format`,
    );
  }
  if (options.decisions) process.stdout.write(pending.join(''));
  else if (options.json)
    process.stdout.write(`${JSON.stringify(replayJson(summary, options.accessLog), null, 2)}\n`);
  else process.stdout.write(renderReplayText(summary, options.accessLog));
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .description('what-if: replay an nginx access log through the limits, with the given switches')
    .requiredOption('-c, --config <file>', 'nginx.conf-subset file')
    .requiredOption('--access-log <file>', 'nginx access log (- for stdin; .gz is gunzipped)')
    .option(
      '--log-format <name>',
      'the log_format the log is written in: combined or one of the config',
      'combined',
    )
    .option('--keyval <zone:key=value>', 'a switch set before the first request (repeatable)', collect, [])
    .option('--json', 'print the report as JSON')
    .option('--decisions', "print simulate's output line for each request instead of the report")
    .option('--top <n>', 'how many limited clients to list', '10')
    .option(
      '--same-second <mode>',
      "with 1 s times: spread each second's lines over it, or burst at its start",
      'spread',
    )
    .option('--host <name>', 'Host for lines whose format has no $host/$http_host')
    .option('--port <n>', "server port for lines whose format has no $server_port (default: simulate's)")
    .addHelpText('after', HELP)
    .action(runReplay);
}
