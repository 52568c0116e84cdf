import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { buildSite } from '../config/build-site.ts';
import { loadConfigFile } from '../config/index.ts';
import { hasCode, LimitswitchError } from '../shared/errors.ts';
import { simulateDefaultPort, simulateLine } from './simulate.ts';

/** `limitswitch simulate -c FILE`: request timelines (JSON lines on stdin) through the engine. */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('run JSON-lines request timelines from stdin through the limit_req engine')
    .requiredOption('-c, --config <file>', 'nginx.conf-subset file')
    .action(async (options: { config: string }) => {
      const site = buildSite(loadConfigFile(options.config).http);
      const defaultPort = simulateDefaultPort(site);
      const out: string[] = [];
      let lineNumber = 0;
      for await (const text of createInterface({
        input: process.stdin,
        crlfDelay: Number.POSITIVE_INFINITY,
      })) {
        lineNumber++;
        if (text.trim() === '') continue;
        let result: ReturnType<typeof simulateLine>;
        try {
          result = simulateLine(site, JSON.parse(text), defaultPort);
        } catch (err) {
          if (!(hasCode(err, 'RL_ERR_SIMULATE_INPUT') || err instanceof SyntaxError)) throw err;
          process.stdout.write(out.join(''));
          throw new LimitswitchError(
            'RL_ERR_SIMULATE_INPUT',
            `limitswitch: invalid input at stdin:${lineNumber}: ${err.message}`,
          );
        }
        if (result !== null) out.push(`${JSON.stringify(result)}\n`);
        if (out.length >= 256) process.stdout.write(out.splice(0).join(''));
      }
      process.stdout.write(out.join(''));
    });
}
