/**
 * Configuration files judged twice, for the tests that word errors as nginx does: written into a
 * folder (`http {}` bodies, numbered), loaded by limitswitch and checked by `nginx -t` — each giving
 * its `[emerg]` text without timestamp and pid, or `loaded`. The three are bound: they may be taken
 * out of the object (`const { file, ours, nginxT } = new ConfigPair(dir)`).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigFile } from '../../src/config/index.ts';
import { NGINX_BIN } from './nginx.ts';

export class ConfigPair {
  readonly #dir: string;
  #serial = 0;

  /** `dir`: where the files go, and nginx's prefix (relative paths in them are read from it). */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /** A new file holding `events {}` and `http { <http> }`; its path. */
  readonly file = (http: string): string => {
    const path = join(this.#dir, `nginx-${++this.#serial}.conf`);
    writeFileSync(path, `events {}\nhttp {\n${http}\n}\n`);
    return path;
  };

  /** limitswitch's refusal of the file, or `loaded`. */
  readonly ours = (path: string): string => {
    try {
      loadConfigFile(path);
    } catch (err) {
      return (err as Error).message.replace(/^\[emerg\] /, '');
    }
    return 'loaded';
  };

  /** `nginx -t`'s refusal of the file, or `loaded`. */
  readonly nginxT = (path: string): string => {
    const run = spawnSync(NGINX_BIN, ['-t', '-p', `${this.#dir}/`, '-c', path, '-e', 'stderr'], {
      encoding: 'utf8',
    });
    const line = run.stderr.split('\n').find((l) => l.includes('[emerg]')) ?? 'loaded';
    return line.replace(/^.*\[emerg\] (\d+#\d+: )?/, '');
  };
}
