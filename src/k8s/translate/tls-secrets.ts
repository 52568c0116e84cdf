/**
 * The `kubernetes.io/tls` Secrets an Ingress's `tls:` names, as files the rendered config reads:
 * NIC's layout, one file per Secret holding the certificate and the key
 * (`/etc/limitswitch/secrets/<namespace>-<name>`), never written to disk — the config loader is given
 * them. A Secret that changes to something unusable is reported and its last good version kept, so a
 * bad certificate never takes TLS away from a host that had it.
 */
import { createSecureContext } from 'node:tls';
import { keyOf, refOf, type Secret, type TranslationProblem } from '../objects.ts';

export const SECRETS_DIR = '/etc/limitswitch/secrets';
const TLS_TYPE = 'kubernetes.io/tls';

export interface TlsSecretFile {
  readonly path: string;
  /** The Secret's resourceVersion in use (the rendered text names it, so a new one is a new config). */
  readonly version: string;
}

/** The usable TLS Secrets of one snapshot of the cluster. */
export interface TlsSecretView {
  file(namespace: string, name: string): TlsSecretFile | null;
  /** The text of a file the config names, for the loader; undefined: not a Secret's. */
  read(path: string): string | undefined;
}

interface Good {
  readonly pem: string;
  readonly version: string;
  readonly source: Secret;
}

export const NO_SECRETS: TlsSecretView = { file: () => null, read: () => undefined };

export function secretPath(namespace: string, name: string): string {
  return `${SECRETS_DIR}/${namespace}-${name}`;
}

export class TlsSecretStore {
  readonly #lastGood = new Map<string, Good>();

  /** The view of `secrets`; problems for those that cannot be used (the last good one stays). */
  resolve(secrets: readonly Secret[], problems: TranslationProblem[]): TlsSecretView {
    const present = new Set(secrets.map(keyOf));
    for (const key of this.#lastGood.keys()) if (!present.has(key)) this.#lastGood.delete(key);
    const files = new Map<string, Good>();
    for (const secret of secrets) {
      // other Secrets are none of ours (a host naming one is told so by the renderer)
      if (secret.type !== TLS_TYPE) continue;
      const key = keyOf(secret);
      const error = usable(secret);
      if (error === null) {
        this.#lastGood.set(key, {
          pem: pemOf(secret),
          version: secret.metadata?.resourceVersion ?? '',
          source: secret,
        });
      } else {
        const kept = this.#lastGood.has(key) && this.#lastGood.get(key)!.source !== secret;
        problems.push({
          object: refOf(secret, 'Secret', 'v1'),
          field: 'data',
          error,
          severity: 'error',
          keptLastGood: kept,
        });
        if (!kept) this.#lastGood.delete(key);
      }
      const good = this.#lastGood.get(key);
      if (good !== undefined)
        files.set(secretPath(secret.metadata?.namespace ?? 'default', secret.metadata?.name ?? ''), good);
    }
    return {
      file: (namespace, name) => {
        const path = secretPath(namespace, name);
        const good = files.get(path);
        return good === undefined ? null : { path, version: good.version };
      },
      read: (path) => files.get(path)?.pem,
    };
  }
}

function decoded(secret: Secret, field: string): string | null {
  const value = secret.data?.[field];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : null;
}

function pemOf(secret: Secret): string {
  return `${decoded(secret, 'tls.crt')!.trimEnd()}\n${decoded(secret, 'tls.key')!.trimEnd()}\n`;
}

/** Why the Secret cannot serve TLS, in NIC's terms, or null. */
function usable(secret: Secret): string | null {
  const cert = decoded(secret, 'tls.crt');
  const key = decoded(secret, 'tls.key');
  if (cert === null || key === null)
    return 'a kubernetes.io/tls secret needs data[tls.crt] and data[tls.key]';
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    return `invalid certificate or key: ${(err as Error).message}`;
  }
  return null;
}
