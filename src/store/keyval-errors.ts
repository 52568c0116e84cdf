/**
 * The store's precondition failures, built in one place so the memory and Redis stores throw the
 * same codes and texts (the NGINX Plus API passes them through to clients).
 */
import { LimitswitchError } from '../shared/errors.ts';

/** POST of a key that is already there: 409, text as NGINX Plus prints it. */
export function keyExistsError(key: string): LimitswitchError {
  return new LimitswitchError('KeyvalKeyExists', `key "${key}" already exists`);
}

/** PATCH/delete of a key that is not there: 404. */
export function keyNotFoundError(): LimitswitchError {
  return new LimitswitchError('KeyvalKeyNotFound');
}

/**
 * Several keys POSTed into a zone that already holds keys: 400 `KeyvalFormatError`, as NGINX Plus
 * answers. The text starts with NGINX Plus's words and goes on to say what to do instead (running a
 * POST of several keys twice, such as the README's first step, lands here).
 */
export function onlyOneKeyError(zone: string): LimitswitchError {
  return new LimitswitchError(
    'KeyvalFormatError',
    `only one key can be added: keyval zone "${zone}" already holds keys; change a key with PATCH (one key a request), or empty the zone with DELETE first`,
  );
}

/** The entries would not fit in the zone's `size`. */
export function zoneFullError(zone: string): LimitswitchError {
  return new LimitswitchError('KeyvalZoneFull', `keyval zone "${zone}" is full`);
}

/** The store cannot be reached (or did not answer within its command timeout): 503. */
export function storeUnavailableError(cause?: unknown): LimitswitchError {
  return new LimitswitchError('StoreUnavailable', undefined, { cause });
}
