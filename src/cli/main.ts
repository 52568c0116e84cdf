import { Command } from 'commander';
import { registerCheckCommand } from './check-command.ts';
import { registerControlPlaneCommand } from './control-plane-command.ts';
import { registerReplicaCommand } from './replica-command.ts';
import { registerSimulateCommand } from './simulate-command.ts';

const program = new Command('limitswitch')
  .description('NGINX-Plus-style dynamic keyval control plane for ingress rate limiting')
  .version('0.1.0');

registerControlPlaneCommand(program);
registerCheckCommand(program);
registerSimulateCommand(program);
registerReplicaCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
