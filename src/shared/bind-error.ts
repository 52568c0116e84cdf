/**
 * A listener that cannot bind, in nginx's words: `bind() to 0.0.0.0:8081 failed (98: Address already
 * in use)`. Every long-running command exits with it rather than running without its port.
 */
import { constants } from 'node:os';
import { LimitswitchError } from './errors.ts';

/** glibc's strerror() for what bind() meets. */
const STRERROR: Readonly<Record<string, string>> = {
  EADDRINUSE: 'Address already in use',
  EACCES: 'Permission denied',
  EADDRNOTAVAIL: 'Cannot assign requested address',
  ENOENT: 'No such file or directory',
};

/** `RL_ERR_BIND` for a failed `listen(port, host)`; any other error is returned as it is. */
export function bindError(host: string, port: number, err: unknown): Error {
  return bindErrorAt(host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`, err);
}

/** The same for an address as nginx prints it (`unix:/path` for a UNIX-domain socket). */
export function bindErrorAt(address: string, err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || (err as { syscall?: unknown }).syscall !== 'listen') {
    return err instanceof Error ? err : new Error(String(err));
  }
  const errno = (constants.errno as Record<string, number | undefined>)[code];
  return new LimitswitchError(
    'RL_ERR_BIND',
    `bind() to ${address} failed (${errno ?? code}: ${STRERROR[code] ?? code})`,
    { cause: err },
  );
}
