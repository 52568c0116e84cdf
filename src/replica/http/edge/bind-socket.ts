/**
 * A listening socket bound as nginx binds it, refused in its words (`bind() to … failed`): a TCP
 * address and port, or a UNIX-domain socket's path.
 */
import { chmod } from 'node:fs/promises';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { UNIX_PREFIX } from '../../../engine/net/address-text.ts';
import { bindError, bindErrorAt } from '../../../shared/bind-error.ts';

/** `reusePort`: worker threads each listen on the port, the kernel spreads connections among them. */
export function bindTcp(
  socket: NetServer,
  port: number,
  host: string,
  options: { readonly reusePort?: boolean; readonly ipv6Only?: boolean } = {},
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const fail = (err: unknown) => reject(bindError(host, port, err));
    socket.once('error', fail);
    const { reusePort = false, ipv6Only = false } = options;
    socket.listen({ port, host, ipv6Only, ...(reusePort ? { reusePort } : {}) }, () => {
      socket.off('error', fail);
      resolve(socket.address() as AddressInfo);
    });
  });
}

/**
 * `unix:/path`, then readable and writable by all (ngx_open_listening_sockets' chmod 0666). A file
 * already at the path fails the bind, as it does nginx's: nothing is removed first. libuv unlinks the
 * socket file when the listener closes, as nginx does at exit.
 */
export function bindUnix(socket: NetServer, address: string): Promise<void> {
  const path = address.slice(UNIX_PREFIX.length);
  return new Promise((resolve, reject) => {
    const fail = (err: unknown) => reject(bindErrorAt(address, err));
    socket.once('error', fail);
    socket.listen({ path }, () => {
      socket.off('error', fail);
      chmod(path, 0o666).then(resolve, fail);
    });
  });
}
