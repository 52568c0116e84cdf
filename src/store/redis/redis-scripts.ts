/**
 * The store's Lua scripts: files in `lua/<verb>-<numKeys>.lua` (KEYS/ARGV documented in each header),
 * registered with ioredis `defineCommand` (EVALSHA, falling back to EVAL once per server), each with the
 * shared helpers of `lua/lib/` it needs prepended (`log.lua`: commit ids; `commit.lua`: keyval mutations).
 */
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';
import { LimitswitchError } from '../../shared/errors.ts';

/** Each script with the preludes of `lua/lib/` it is loaded with. */
const SCRIPTS = {
  // Keyval mutations: the change log's commit ids, then the precondition, commit and audit helpers.
  'add-8': ['log', 'commit'],
  'put-8': ['log', 'commit'],
  'delete-8': ['log', 'commit'],
  'empty-8': ['log', 'commit'],
  'expire-7': ['log', 'commit'],
  'restore-7': ['log', 'commit'],
  'snapshot-4': ['log'],
  'head-3': ['log'],
  'commit-at-1': ['log'],
  'changes-2': [],
  'counters-add-1': [],
  'counters-reset-1': [],
  'lease-release-1': [],
  'record-put-3': [],
  'limit-sync-5': [],
} as const satisfies Record<string, readonly ('log' | 'commit')[]>;

export type ScriptName = keyof typeof SCRIPTS;

function read(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
}

let sources: Map<ScriptName, { lua: string; numberOfKeys: number }> | undefined;

function scriptSources(): Map<ScriptName, { lua: string; numberOfKeys: number }> {
  if (sources) return sources;
  sources = new Map();
  for (const [name, preludes] of Object.entries(SCRIPTS) as [ScriptName, readonly string[]][]) {
    const parts = [...preludes.map((lib) => read(`lib/${lib}.lua`)), read(`${name}.lua`)];
    sources.set(name, { lua: parts.join('\n'), numberOfKeys: Number(name.slice(name.lastIndexOf('-') + 1)) });
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

/**
 * Run one script, then `WAIT replicas timeoutMs` on the same connection (one pipeline, so a Cluster
 * sends both to the node that owns the keys): the script's reply, and how many replicas acknowledged
 * everything written on that connection so far.
 */
export async function runScriptAndWait(
  client: Redis | Cluster,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
  wait: { readonly replicas: number; readonly timeoutMs: number },
): Promise<{ reply: unknown; acknowledged: number }> {
  const pipeline = client.pipeline() as unknown as Record<string, (...a: (string | number)[]) => unknown> & {
    call(command: string, ...a: (string | number)[]): unknown;
    exec(): Promise<[Error | null, unknown][] | null>;
  };
  const command = pipeline[commandName(name)];
  if (!command)
    throw new LimitswitchError('RL_ERR_STORE_PROTOCOL', `script ${name} is not defined on this client`);
  command.call(pipeline, ...keys, ...args);
  pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
  const results = (await pipeline.exec()) ?? [];
  const [scriptResult, waitResult] = results;
  if (!scriptResult || !waitResult)
    throw new LimitswitchError('RL_ERR_STORE_PROTOCOL', 'pipeline lost a reply');
  if (scriptResult[0]) throw scriptResult[0];
  if (waitResult[0]) throw waitResult[0];
  return { reply: scriptResult[1], acknowledged: Number(waitResult[1]) };
}
