/**
 * What the replica calls itself where nginx writes its name (the `Server` field, the tail of its
 * pages): `limitswitch/<version>` for nginx's `nginx/1.22.1` with `server_tokens on`, `limitswitch`
 * for `nginx` with `off`. The version is package.json's, read once.
 */
import { readFileSync } from 'node:fs';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}

/** With `server_tokens on` (nginx: `nginx/1.22.1`). */
const FULL_NAME = `limitswitch/${packageVersion()}`;
/** With `server_tokens off` (nginx: `nginx`). */
const SHORT_NAME = 'limitswitch';

/** The name nginx's header filter and pages write for `server_tokens`. */
export function serverValue(serverTokens: boolean): string {
  return serverTokens ? FULL_NAME : SHORT_NAME;
}
