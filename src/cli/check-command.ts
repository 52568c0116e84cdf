/**
 * `limitswitch check -c FILE`: tests a configuration file the way `nginx -t -c FILE` does, with the
 * same lines on stderr (`[warn]` findings, then success, or the `[emerg]` error and failure).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, formatConfigMessage, loadConfigFile } from '../config/index.ts';

/** Runs the check and writes its report lines; returns the exit code (0 ok, 1 failed). */
export function checkConfig(path: string, writeLine: (line: string) => void): number {
  const file = resolve(path);
  const say = (text: string): void => writeLine(`limitswitch: ${text}`);
  try {
    loadConfigFile(file, {
      onWarning: (w) => say(formatConfigMessage('warn', w.text, w.file, w.line)),
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    say(err.message);
    say(`configuration file ${file} test failed`);
    return 1;
  }
  say(`the configuration file ${file} syntax is ok`);
  say(`configuration file ${file} test is successful`);
  return 0;
}

export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description('test a configuration file, like nginx -t')
    .requiredOption('-c, --config <file>', 'nginx.conf-subset file')
    .action((options: { config: string }) => {
      process.exitCode = checkConfig(options.config, (line) => process.stderr.write(`${line}\n`));
    });
}
