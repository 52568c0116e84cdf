import type { Command } from 'commander';
import type { Logger } from 'pino';
import { LimitswitchError } from '../shared/errors.ts';
import { openStore } from '../store/open-store.ts';
import { keySchema } from '../store/redis/keys.ts';
import type { Store } from '../store/store.ts';

/** The store flags every long-running command takes (`demo`, `control-plane`, `replica`). */
export interface StoreFlags {
  readonly redis?: string;
  readonly clusterName?: string;
  readonly keyPrefix?: string;
}

/** Adds `--redis`, `--cluster-name` and `--key-prefix`, with `redisHelp` for the first. */
export function storeOptions(command: Command, redisHelp: string): Command {
  return command
    .option('--redis <url>', redisHelp)
    .option(
      '--cluster-name <name>',
      'the limitswitch cluster in the store: its keys are <prefix>:{<name>}:… (default: LIMITSWITCH_CLUSTER_NAME, else "default")',
    )
    .option(
      '--key-prefix <prefix>',
      'first part of every Redis key (default: LIMITSWITCH_KEY_PREFIX, else "limitswitch")',
    );
}

/**
 * The shared store for `--redis URL` (else `REDIS_URL`), or the embedded memory store (one process only)
 * without one. Several limitswitch clusters share one Redis by their cluster names or key prefixes.
 */
export function openCliStore(
  flags: StoreFlags,
  logger: Logger,
  options: { readonly warnMemory?: boolean } = {},
): Store {
  const url = flags.redis ?? process.env.REDIS_URL;
  const cluster = flags.clusterName ?? nonEmpty(process.env.LIMITSWITCH_CLUSTER_NAME);
  const prefix = flags.keyPrefix ?? nonEmpty(process.env.LIMITSWITCH_KEY_PREFIX);
  try {
    keySchema({ cluster, prefix });
  } catch (err) {
    throw new LimitswitchError('RL_ERR_CLI_USAGE', `--cluster-name, --key-prefix: ${(err as Error).message}`);
  }
  if (!url && options.warnMemory !== false)
    logger.warn('no --redis: keyvals live in this process only; other processes cannot share them');
  return openStore({ url: url || undefined, cluster, prefix });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
