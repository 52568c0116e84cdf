/**
 * Who may write (and, optionally, read): bearer tokens compared in constant time, client CIDRs (the
 * `allow`/`deny` of NGINX's API location) and read-only mode (`api write=off`). With no token
 * configured, writes are accepted from loopback clients only.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { AccessList, type AccessRuleDefinition } from '../engine/net/access-list.ts';
import { type Cidr, cidrMatch, isLoopback, parseCidr, parseClientAddr } from '../engine/net/address-text.ts';
import { LimitswitchError } from '../shared/errors.ts';

export interface AuthOptions {
  /** Token id → token. Empty: writes only from loopback. */
  readonly tokens?: ReadonlyMap<string, string>;
  /** Client CIDRs allowed to write (and to read when `readAuth`); empty allows any address. */
  readonly allow?: readonly string[];
  /** NGINX's `api write=off`: every write answers 405 MethodDisabled. */
  readonly readOnly?: boolean;
  /** Reads of the API, cluster views and audit need a token (and an allowed address) too. */
  readonly readAuth?: boolean;
  /**
   * The `allow`/`deny` rules of `-c FILE`'s `api` location, checked first for every API read and write,
   * in order (the first match decides, none allows), as nginx's access module does.
   */
  readonly clientRules?: readonly AccessRuleDefinition[];
}

/** The identity a request was admitted with (for the audit trail). */
export interface Principal {
  readonly tokenId: string | null;
}

const MIN_TOKEN_LENGTH = 16;
const ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parse `id:token` pairs, one per line (a token file) or separated by commas (`LIMITSWITCH_TOKENS`).
 * Blank lines and `#` comments are skipped. Tokens shorter than 16 characters are refused.
 */
export function parseTokens(text: string, source: string): Map<string, string> {
  const tokens = new Map<string, string>();
  const items = text.split(/[\n,]/);
  for (const [index, raw] of items.entries()) {
    const item = raw.trim();
    if (item === '' || item.startsWith('#')) continue;
    const colon = item.indexOf(':');
    const where = `${source}: entry ${index + 1}`;
    if (colon < 0) throw new LimitswitchError('RL_ERR_ACCESS_INVALID', `${where}: expected "id:token"`);
    const id = item.slice(0, colon);
    const token = item.slice(colon + 1);
    if (!ID_PATTERN.test(id))
      throw new LimitswitchError('RL_ERR_ACCESS_INVALID', `${where}: invalid token id "${id}"`);
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new LimitswitchError(
        'RL_ERR_ACCESS_INVALID',
        `${where}: token "${id}" is shorter than ${MIN_TOKEN_LENGTH} characters`,
      );
    }
    if (tokens.has(id))
      throw new LimitswitchError('RL_ERR_ACCESS_INVALID', `${where}: duplicate token id "${id}"`);
    tokens.set(id, token);
  }
  return tokens;
}

/** An allowed client range (`--allow`): an address or CIDR as nginx reads it; throws naming the text. */
export function parseAllowRange(text: string): Cidr {
  const range = parseCidr(text);
  if (range === null)
    throw new LimitswitchError('RL_ERR_ACCESS_INVALID', `invalid address or CIDR "${text}"`);
  return range;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export class AccessControl {
  readonly #tokens: readonly { id: string; digest: Buffer }[];
  readonly #allow: readonly Cidr[];
  readonly readOnly: boolean;
  readonly readAuth: boolean;
  readonly #clients: AccessList | null;

  constructor(options: AuthOptions = {}) {
    const rules = options.clientRules ?? [];
    this.#clients = rules.length === 0 ? null : new AccessList(rules);
    this.#tokens = [...(options.tokens ?? new Map())].map(([id, token]) => ({ id, digest: digest(token) }));
    this.#allow = (options.allow ?? []).map(parseAllowRange);
    this.readOnly = options.readOnly ?? false;
    this.readAuth = options.readAuth ?? false;
  }

  /** Startup warnings worth logging. */
  warnings(): string[] {
    if (this.#tokens.length > 0 || this.readOnly) return [];
    return ['no API token configured: writes are accepted from loopback clients only'];
  }

  /** The config's `allow`/`deny`: 403 for a client they deny (before any token is looked at). */
  authorizeClient(client: string): void {
    if (this.#clients !== null && !this.#clients.allows(client)) {
      throw new LimitswitchError('Forbidden', `access forbidden by rule (client ${client})`);
    }
  }

  /** Admit a write, or throw 403/401/405 in that order (access, authentication, method). */
  authorizeWrite(client: string, authorization: string | undefined): Principal {
    const principal = this.#authenticate(client, authorization, true);
    if (this.readOnly) throw new LimitswitchError('MethodDisabled');
    return principal;
  }

  /** Admit a read of a protected endpoint (only checked when `readAuth`). */
  authorizeRead(client: string, authorization: string | undefined): Principal {
    if (!this.readAuth) return { tokenId: null };
    return this.#authenticate(client, authorization, false);
  }

  /** IPv4-mapped clients match IPv4 ranges, as nginx's `allow` does. */
  #allows(client: string): boolean {
    const address = parseClientAddr(client);
    return address !== null && this.#allow.some((range) => cidrMatch(range, address));
  }

  #authenticate(client: string, authorization: string | undefined, write: boolean): Principal {
    if (this.#allow.length > 0 && !this.#allows(client)) {
      throw new LimitswitchError('Forbidden', `client ${client} is not allowed`);
    }
    if (this.#tokens.length === 0) {
      if (write && !isLoopback(client)) {
        throw new LimitswitchError(
          'Forbidden',
          'writes are accepted from loopback only: no token is configured',
        );
      }
      return { tokenId: null };
    }
    const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new LimitswitchError('Unauthorized', 'bearer token required');
    const tokenId = this.#match(match[1]!);
    if (tokenId === null) throw new LimitswitchError('Unauthorized', 'invalid token');
    return { tokenId };
  }

  /** Compare against every token, always all of them, in constant time per comparison. */
  #match(presented: string): string | null {
    const given = digest(presented);
    let found: string | null = null;
    for (const token of this.#tokens) {
      if (timingSafeEqual(given, token.digest) && found === null) found = token.id;
    }
    return found;
  }
}
