/**
 * NGINX Plus API error bodies: `{"error":{"status","text","code"},"request_id","href"}`, plus the empty
 * `path`/`method` that API versions 1–3 still carry. Every failure of every route, including fastify's
 * own (body too large, bad URL, schema validation), is turned into one of these here.
 */
import { randomBytes } from 'node:crypto';
import { ERRORS, type ErrorCode, isLimitswitchError } from '../shared/errors.ts';

export const NGINX_API_HREF = 'https://nginx.org/en/docs/http/ngx_http_api_module.html';

export interface NginxErrorBody {
  error: { status: number; text: string; code: string };
  request_id: string;
  href: string;
  path?: string;
  method?: string;
}

/** What an error becomes on the wire. */
export interface ApiError {
  readonly status: number;
  readonly code: string;
  readonly text: string;
}

/** `$request_id`: 16 random bytes as 32 hex characters. */
export function newRequestId(): string {
  return randomBytes(16).toString('hex');
}

export function nginxErrorBody(
  error: ApiError,
  requestId: string,
  apiVersion: number | null,
): NginxErrorBody {
  const body: NginxErrorBody = {
    error: { status: error.status, text: error.text, code: error.code },
    request_id: requestId,
    href: NGINX_API_HREF,
  };
  if (apiVersion !== null && apiVersion <= 3) {
    body.path = '';
    body.method = '';
  }
  return body;
}

export function apiError(code: ErrorCode, text?: string): ApiError {
  return { status: ERRORS[code].status, code, text: text ?? ERRORS[code].text };
}

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  validation?: readonly { instancePath?: string; keyword?: string; params?: Record<string, unknown> }[];
  validationContext?: string;
}

/** Map anything thrown while serving a request to an NGINX-style error. */
export function toApiError(err: unknown): ApiError {
  if (isLimitswitchError(err)) {
    return { status: err.status, code: err.code, text: err.message };
  }
  const e = (typeof err === 'object' && err !== null ? err : {}) as FastifyLikeError;
  if (e.validation) return validationError(e.validationContext, e.validation);
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return apiError('BodyTooLarge');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return apiError('JsonError');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return apiError('PathNotFound');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) return { ...apiError('BodyReadError'), status };
  return apiError('InternalError');
}

/** Body errors about the object itself, in NGINX's words. */
const BODY_TEXT: Readonly<Record<string, string>> = {
  minProperties: 'key required',
  propertyNames: 'key required',
  minLength: 'key required',
  maxProperties: 'only one key can be updated',
};

/**
 * ajv errors → NGINX codes. Body errors are `KeyvalFormatError` (only keyval routes take bodies) with
 * the NGINX vocabulary: `key required` for `{}` or an empty key, `only one key can be updated` for a
 * PATCH of several, `invalid JSON` for a non-object, otherwise the key whose value is wrong.
 */
function validationError(
  context: string | undefined,
  errors: readonly { instancePath?: string; keyword?: string; params?: Record<string, unknown> }[],
): ApiError {
  const first = errors[0] ?? {};
  const path = first.instancePath ?? '';
  if (context === 'body') {
    if (path === '') return apiError('KeyvalFormatError', BODY_TEXT[first.keyword ?? ''] ?? 'invalid JSON');
    const [key] = path.slice(1).split('/').map(unescapePointer);
    // anyOf reports every branch; an `expire` out of range is the more useful one to name.
    if (errors.some((e) => e.instancePath?.endsWith('/expire'))) {
      return apiError('KeyvalFormatError', `invalid expire of key "${key}"`);
    }
    return apiError('KeyvalFormatError', `invalid value of key "${key}"`);
  }
  const name =
    path.slice(1) || String(first.params?.missingProperty ?? first.params?.additionalProperty ?? '');
  return apiError('QueryFormatError', `invalid "${name}" argument`);
}

function unescapePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}
