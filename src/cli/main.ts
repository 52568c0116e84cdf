import { Command } from 'commander';
import { hasCode } from '../shared/errors.ts';

type Register = (program: Command) => void;

/**
 * Every command, loaded on demand: `limitswitch simulate` does not load fastify or ioredis, and a
 * command whose module fails to load cannot break the others. `--help` loads them all.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  demo: async () => (await import('./demo-command.ts')).registerDemoCommand,
  check: async () => (await import('./check-command.ts')).registerCheckCommand,
  simulate: async () => (await import('./simulate-command.ts')).registerSimulateCommand,
  replay: async () => (await import('./replay-command.ts')).registerReplayCommand,
  replica: async () => (await import('./replica-command.ts')).registerReplicaCommand,
  'control-plane': async () => (await import('./control-plane-command.ts')).registerControlPlaneCommand,
  render: async () => (await import('./render-command.ts')).registerRenderCommand,
  migrate: async () => (await import('./migrate-command.ts')).registerMigrateCommand,
};

const program = new Command('limitswitch')
  .description('NGINX-Plus-style dynamic keyval control plane for ingress rate limiting')
  .version('0.1.0');

// A closed stdout (`limitswitch simulate … | head -1`) ends the command quietly, as `cat | head` does.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

async function main(): Promise<void> {
  const requested = process.argv[2];
  const load = requested !== undefined ? COMMANDS[requested] : undefined;
  for (const loader of load ? [load] : Object.values(COMMANDS)) (await loader())(program);
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  console.error(failureLine(err));
  process.exitCode = 1;
  // A command that failed while starting exits, whatever it had opened (a store connection, timers).
  setTimeout(() => process.exit(1), 2000).unref();
});

/** What a failed command prints: nginx's `nginx: [emerg] …` shape, under our name. */
function failureLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  if (text.startsWith('limitswitch')) return text;
  if (hasCode(err, 'RL_ERR_BIND')) return `limitswitch: [emerg] ${text}`;
  return `limitswitch: ${text}`;
}
