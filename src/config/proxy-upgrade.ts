/**
 * Whether a location tunnels protocol upgrades (WebSocket). nginx does so only when the request it sends
 * upstream asks for the upgrade: by default it drops the client's `Upgrade`, sends `Connection: close`
 * and speaks HTTP/1.0, so the upstream sees a plain request. The usual lines change all three:
 *
 *     proxy_http_version 1.1;
 *     proxy_set_header Upgrade $http_upgrade;
 *     proxy_set_header Connection "upgrade";      # or $connection_upgrade from a map
 *
 * The rule, on the settings in force after inheritance: `proxy_http_version 1.1`, an `Upgrade` header
 * set to a non-empty value, and a `Connection` header whose value holds a variable or the token
 * `upgrade`. The values themselves are not evaluated: a tunnelling location sends the client's own
 * `Upgrade` and `Connection: upgrade`, which is what those lines produce for an upgrade request.
 */
import type { ProxyHttpVersion, ProxySetHeader } from './model.ts';

export interface ProxyUpgradeSettings {
  readonly proxyHttpVersion: ProxyHttpVersion;
  readonly proxySetHeaders: readonly Pick<ProxySetHeader, 'field' | 'value'>[];
}

export function proxiesUpgrades(conf: ProxyUpgradeSettings): boolean {
  if (conf.proxyHttpVersion !== '1.1') return false;
  let upgrade = false;
  let connection = false;
  for (const { field, value } of conf.proxySetHeaders) {
    const name = field.toLowerCase();
    if (name === 'upgrade' && value !== '') upgrade = true;
    else if (name === 'connection' && namesUpgrade(value)) connection = true;
  }
  return upgrade && connection;
}

function namesUpgrade(value: string): boolean {
  return value.includes('$') || value.split(',').some((token) => token.trim().toLowerCase() === 'upgrade');
}
