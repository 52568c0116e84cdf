import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { buildSite } from '../config/build-site.ts';
import { loadConfigFile } from '../config/index.ts';
import { defaultRequestPort } from '../engine/http/served-ports.ts';
import { hasCode, LimitswitchError } from '../shared/errors.ts';
import { simulateLine } from './simulate.ts';

const INPUT_HELP = `
Input, one JSON object per line (t: nginx's clock in ms):
  {"t":0,"addr":"10.0.0.1","uri":"/coffee","host":"cafe.example.com","port":80}
      a request; "host" (the Host header) picks the server_name, "port" the listen port; without
      "port" it goes to port 80 when a server proxies it (what curl http://127.0.0.1/ reaches),
      else to the first listen port a replica serves (never an api-only server); also "method",
      "headers" (an object of strings)
  {"t":5,"keyval":{"zone":"limitreq_uri","key":"/coffee","value":"1","expire":60000}}
      a keyval change, as the Plus API makes it ("value":null deletes the key)
Output, one line per request: {"t":…,"status":"PASSED|DELAYED|REJECTED|…","code":…,"delay_ms":…,"zone":…}
  and "uri" when a rewrite changed it (what proxy_pass without a URI part sends upstream)
`;

/** `limitswitch simulate -c FILE`: request timelines (JSON lines on stdin) through the engine. */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('run JSON-lines request timelines from stdin through the limit_req engine')
    .requiredOption('-c, --config <file>', 'nginx.conf-subset file')
    .addHelpText('after', INPUT_HELP)
    .action(async (options: { config: string }) => {
      const site = buildSite(loadConfigFile(options.config).http);
      const defaultPort = defaultRequestPort(site);
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
