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
  LimitConnNotFound: { status: 404, text: 'limit_conn not found' },
  UpstreamNotFound: { status: 404, text: 'upstream not found' },
  PriorityLevelNotFound: { status: 404, text: 'priority level not found' },
  BodyReadError: { status: 400, text: 'failed to read request body' },
  BodyTooLarge: { status: 413, text: 'request entity too large' },
  JsonError: { status: 415, text: 'json error' },
  // limitswitch extensions on the API
  /** 4xx, not NGINX's 500 for a failed allocation: a full zone is the writer's to resolve (delete keys). */
  KeyvalZoneFull: { status: 413, text: 'keyval zone is full' },
  /** The store cannot be reached, or did not answer within its command timeout. */
  StoreUnavailable: { status: 503, text: 'keyval store unavailable' },
  Unauthorized: { status: 401, text: 'unauthorized' },
  Forbidden: { status: 403, text: 'forbidden' },
  /**
   * A write whose `Host` is not one of the API's names (IP literals, `localhost`, `--server-name`, the
   * `api` server's `server_name`): a page of another site whose name resolves here (DNS rebinding).
   */
  HostNotAllowed: { status: 421, text: "host is not one of this API's names" },
  /** A write from a page of another origin (`Origin`, `Sec-Fetch-Site`): cross-site request forgery. */
  OriginNotAllowed: { status: 403, text: 'writes from pages of other origins are refused' },
  /** A write body without `Content-Type: application/json` (a form or `text/plain`: what pages send freely). */
  ContentTypeNotJson: { status: 415, text: 'request body is not sent as application/json' },
  MethodNotSupported: { status: 405, text: 'method not supported' },
  QueryFormatError: { status: 400, text: 'invalid query argument' },
  InternalError: { status: 500, text: 'internal error' },
  AlertFormatError: { status: 400, text: 'invalid Alertmanager notification' },
  // limitswitch internals: what a command, a file or an object can be refused for
  RL_ERR_CONFIG_INVALID: { status: 500, text: 'invalid configuration' },
  /** A complex value (`$var` text) nginx would not compile; the config layer adds `file:line`. */
  RL_ERR_VALUE_SYNTAX: { status: 400, text: 'invalid value' },
  /** A variable no module defines (nginx: `unknown "name" variable`). */
  RL_ERR_UNKNOWN_VARIABLE: { status: 400, text: 'unknown variable' },
  /** An annotation or ConfigMap value the translator cannot carry over; the caller names the object. */
  RL_ERR_ANNOTATION_INVALID: { status: 400, text: 'invalid annotation value' },
  /** `render -f`: YAML that is not a list of Kubernetes objects. */
  RL_ERR_KUBERNETES_OBJECTS: { status: 400, text: 'invalid Kubernetes objects' },
  /** `simulate`: a timeline line that is not a request or a keyval change. */
  RL_ERR_SIMULATE_INPUT: { status: 400, text: 'invalid simulate input' },
  /** `--token-file`, `LIMITSWITCH_TOKENS`, `--allow`: malformed credentials or address ranges. */
  RL_ERR_ACCESS_INVALID: { status: 500, text: 'invalid access configuration' },
  /** `api-spec/openapi.yaml` is not what the routes need (a packaging error). */
  RL_ERR_API_SPEC: { status: 500, text: 'invalid API specification' },
  /** The store answered what it should not (an error reply, a script not defined). */
  RL_ERR_STORE_PROTOCOL: { status: 500, text: 'keyval store returned an unexpected reply' },
  RL_ERR_STORE_STATE_FILE: { status: 500, text: 'keyval state file is unreadable' },
  RL_ERR_ALERT_RULES_INVALID: { status: 500, text: 'invalid alert rules' },
  RL_ERR_CLI_USAGE: { status: 400, text: 'invalid command line' },
  /** A listener could not bind its address (nginx: `bind() to host:port failed (98: …)`). */
  RL_ERR_BIND: { status: 500, text: 'bind() failed' },
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

/** `err` is a `LimitswitchError` with this code (how callers tell errors apart: never `instanceof`). */
export function hasCode(err: unknown, code: ErrorCode): err is LimitswitchError {
  return isLimitswitchError(err) && err.code === code;
}

export function isLimitswitchError(err: unknown): err is LimitswitchError {
  const code: unknown = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && Object.hasOwn(ERRORS, code);
}
