import { Command } from 'commander';

const program = new Command('limitswitch')
  .description('NGINX-Plus-style dynamic keyval control plane for ingress rate limiting')
  .version('0.1.0');

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
