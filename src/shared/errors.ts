/**
 * The one error registry. Two families share it:
 * - NGINX Plus API codes (`KeyvalNotFound`, …), spelled exactly as NGINX Plus spells them, with the HTTP
 *   status the API answers;
 * - limitswitch's own codes (`RL_ERR_<AREA>_<WHAT>`), for config, store and CLI failures.
 * Callers match on `err.code`, never on `instanceof` chains.
 */

export interface ErrorDefinition {
  /** HTTP status when the error reaches an API client. */
  readonly status: number;
  /** Default text (NGINX Plus uses lower-case sentences). */
  readonly text: string;
}

export const ERRORS = {
  // NGINX Plus API (ngx_http_api_module, yaml/nginx_api.yaml)
  UnknownVersion: { status: 404, text: 'unknown version' },
  PathNotFound: { status: 404, text: 'path not found' },
  MethodDisabled: { status: 405, text: 'method disabled' },
  KeyvalFormatError: { status: 400, text: 'invalid key format' },
  KeyvalNotFound: { status: 404, text: 'keyval not found' },
  KeyvalKeyNotFound: { status: 404, text: 'keyval key not found' },
  KeyvalKeyExists: { status: 409, text: 'key already exists' },
  LimitReqNotFound: { status: 404, text: 'limit_req not found' },
  BodyReadError: { status: 400, text: 'failed to read request body' },
  BodyTooLarge: { status: 413, text: 'request entity too large' },
  JsonError: { status: 415, text: 'json error' },
  // limitswitch extensions on the API
  KeyvalZoneFull: { status: 500, text: 'keyval zone is full' },
  /** The store cannot be reached, or did not answer within its command timeout. */
  StoreUnavailable: { status: 503, text: 'keyval store unavailable' },
  Unauthorized: { status: 401, text: 'unauthorized' },
  Forbidden: { status: 403, text: 'forbidden' },
  MethodNotSupported: { status: 405, text: 'method not supported' },
  QueryFormatError: { status: 400, text: 'invalid query argument' },
  InternalError: { status: 500, text: 'internal error' },
  AlertFormatError: { status: 400, text: 'invalid Alertmanager notification' },
  // limitswitch internals
  RL_ERR_CONFIG_INVALID: { status: 500, text: 'invalid configuration' },
  /** The store cannot be reached, or did not answer within its command timeout. */
  RL_ERR_STORE_PROTOCOL: { status: 500, text: 'keyval store returned an unexpected reply' },
  RL_ERR_STORE_STATE_FILE: { status: 500, text: 'keyval state file is unreadable' },
  RL_ERR_ALERT_RULES_INVALID: { status: 500, text: 'invalid alert rules' },
  RL_ERR_CLI_USAGE: { status: 400, text: 'invalid command line' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

/** An error with a registered code; `text` defaults to the registry's text. */
export class LimitswitchError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, text?: string, options?: { cause?: unknown }) {
    super(text ?? ERRORS[code].text, options);
    this.name = 'LimitswitchError';
    this.code = code;
    this.status = ERRORS[code].status;
  }
}

export function isLimitswitchError(err: unknown): err is LimitswitchError {
  const code: unknown = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && Object.hasOwn(ERRORS, code);
}
