/**
 * `keepalive_disable none | msie6 | safari …;` (ngx_http_core_module): the browsers whose requests
 * get no keep-alive — MSIE 4 to 6 (not 6 with SV1) for a POST, Safari on macOS for any request —
 * recognised from `User-Agent` as ngx_http_process_user_agent does.
 */

/** The directive's bits (NGX_HTTP_KEEPALIVE_DISABLE_*); `none` sets a bit of its own, which disables nothing. */
export const KEEPALIVE_DISABLE_NONE = 0x02;
export const KEEPALIVE_DISABLE_MSIE6 = 0x04;
export const KEEPALIVE_DISABLE_SAFARI = 0x08;

/** The directive's values, by name. */
export const KEEPALIVE_DISABLE_VALUES: Readonly<Record<string, number>> = {
  none: KEEPALIVE_DISABLE_NONE,
  msie6: KEEPALIVE_DISABLE_MSIE6,
  safari: KEEPALIVE_DISABLE_SAFARI,
};

/** What nginx's user agent check finds; each `User-Agent` line adds to it, in order. */
interface Browser {
  msie: boolean;
  msie6: boolean;
  opera: boolean;
  safari: boolean;
}

function readUserAgent(agent: string, browser: Browser): void {
  const msie = agent.indexOf('MSIE ');
  if (msie !== -1 && msie + 7 < agent.length) {
    browser.msie = true;
    if (agent[msie + 6] === '.') {
      const major = agent[msie + 5];
      if (major === '4' || major === '5') browser.msie6 = true;
      else if (major === '6' && !agent.includes('SV1', msie + 8)) browser.msie6 = true;
    }
  }
  if (agent.includes('Opera')) {
    browser.opera = true;
    browser.msie = false;
    browser.msie6 = false;
  }
  if (!browser.msie && !browser.opera && !agent.includes('Gecko/') && !agent.includes('Chrome/')) {
    if (agent.includes('Safari/') && agent.includes('Mac OS X')) browser.safari = true;
  }
}

/**
 * True when `keepalive_disable` (its bits, `mask`) takes keep-alive away from a request with this
 * method and these header lines (`[name, value, …]`).
 */
export function keepAliveDisabled(
  mask: number,
  method: string | undefined,
  rawHeaders: readonly string[],
): boolean {
  const msie6 = (mask & KEEPALIVE_DISABLE_MSIE6) !== 0 && method === 'POST';
  if (!msie6 && (mask & KEEPALIVE_DISABLE_SAFARI) === 0) return false;
  const browser: Browser = { msie: false, msie6: false, opera: false, safari: false };
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 10 && name.toLowerCase() === 'user-agent') {
      readUserAgent(rawHeaders[i + 1]!, browser);
      seen = true;
    }
  }
  if (!seen) return false;
  if (msie6 && browser.msie6) return true;
  return browser.safari && (mask & KEEPALIVE_DISABLE_SAFARI) !== 0;
}
