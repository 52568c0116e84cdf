/**
 * The replica's configuration as a short hash, for heartbeats and the cluster views: `config_hash`
 * tells any two configurations apart; the one without listen addresses says whether replicas on other
 * ports (or reading copies of one file) run the same configuration.
 */
import { createHash } from 'node:crypto';
import type { Config, ListenSpec } from '../config/model.ts';

export function hashConfig(config: Config): string {
  return createHash('sha256').update(JSON.stringify(config.http)).digest('hex').slice(0, 16);
}

/**
 * `hashConfig` without where the block listens and where its text was read: each `listen` keeps its
 * flags (ssl, http2, default_server) but not its host and port, and the file:line source refs are
 * left out. Two replicas of one configuration on other ports (or reading copies of one file) get the
 * same hash; `hashConfig` stays as it was, since it is the API's `config_hash`, which tells them apart.
 */
export function hashConfigWithoutListen(config: Config): string {
  const json = JSON.stringify(config.http, (key, value) => {
    if (isSourceRef(value)) return undefined;
    if (key === 'listen' && Array.isArray(value))
      return value.map(({ host: _host, port: _port, ...flags }: ListenSpec) => flags);
    return value;
  });
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

/** A directive's `{ file, line }` (under `source`, `sourceRef` and the like). */
function isSourceRef(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  return keys.length === 2 && keys.includes('file') && keys.includes('line');
}
