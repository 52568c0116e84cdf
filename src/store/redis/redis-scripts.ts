/**
 * The store's Lua scripts: files in `lua/<verb>-<numKeys>.lua` (KEYS/ARGV documented in each header),
 * registered with ioredis `defineCommand` (EVALSHA, falling back to EVAL once per server). Keyval
 * mutation scripts get `lua/lib/commit.lua` prepended: the shared precondition, commit and audit helpers.
 */
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';
import { LimitswitchError } from '../../shared/errors.ts';

/** Keyval mutations: `lib/commit.lua` is prepended. */
const MUTATIONS = ['add-7', 'put-7', 'delete-7', 'empty-7', 'expire-6'] as const;
const OTHERS = [
  'snapshot-4',
  'head-2',
  'changes-2',
  'counters-add-1',
  'counters-reset-1',
  'lease-release-1',
  'record-put-3',
] as const;

export type ScriptName = (typeof MUTATIONS)[number] | (typeof OTHERS)[number];

function read(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
}

let sources: Map<ScriptName, { lua: string; numberOfKeys: number }> | undefined;

function scriptSources(): Map<ScriptName, { lua: string; numberOfKeys: number }> {
  if (sources) return sources;
  const prelude = read('lib/commit.lua');
  sources = new Map();
  for (const name of [...MUTATIONS, ...OTHERS]) {
    const body = read(`${name}.lua`);
    const isMutation = (MUTATIONS as readonly string[]).includes(name);
    sources.set(name, {
      lua: isMutation ? `${prelude}\n${body}` : body,
      numberOfKeys: Number(name.slice(name.lastIndexOf('-') + 1)),
    });
  }
  return sources;
}

function commandName(name: ScriptName): string {
  return `limitswitch_${name.replace(/-/g, '_')}`;
}

/** Register every script on a client (once per client). */
export function defineScripts(client: Redis | Cluster): void {
  for (const [name, { lua, numberOfKeys }] of scriptSources()) {
    client.defineCommand(commandName(name), { lua, numberOfKeys });
  }
}

/** Run one script; keys must be exactly the number its file name says. */
export async function runScript(
  client: Redis | Cluster,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const command = (client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[
    commandName(name)
  ];
  if (!command)
    throw new LimitswitchError('RL_ERR_STORE_PROTOCOL', `script ${name} is not defined on this client`);
  return command.call(client, ...keys, ...args);
}
