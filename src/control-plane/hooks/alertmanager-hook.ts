/**
 * `POST /hooks/alertmanager`: Alertmanager's webhook receiver, applying the `--alert-rules` file
 * through `AlertAutomation`. Registered on the control-plane instance (so the API's error shape,
 * request ids and metrics apply) from the spec operation `postAlertmanagerHook`, with:
 * - its own authentication, because Alertmanager's `http_config` may send HTTP Basic as well as a
 *   bearer token: Basic `<token id>:<token>` is checked as that token; both go through the API's
 *   write checks (CIDRs, loopback-only without tokens, read-only, then Host, Origin and
 *   `Content-Type: application/json`, which Alertmanager sends);
 * - its own body limit (`max_body_bytes`; notifications carry many alerts);
 * - its own 400 text (the spec's schema, reported as `AlertFormatError` with the failing field);
 * - a sweeper that carries out reverts delayed by `min_hold` (only when some rule has one).
 * Without rules the route answers 404 PathNotFound, so the spec and the routes never drift.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AlertAutomation } from '../../automation/alert-automation.ts';
import { type AlertRules, DEFAULT_MAX_BODY_BYTES } from '../../automation/alert-rules.ts';
import type { AlertmanagerNotification } from '../../automation/alertmanager-payload.ts';
import { isKeyvalKey } from '../../engine/keyval/keyval-zone.ts';
import { AutomationMetrics } from '../../metrics/automation-metrics.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import { unstorableKey } from '../../store/keyval-text.ts';
import type { AccessControl, Principal } from '../access-control.ts';
import { writeRequestHead } from '../browser-checks.ts';
import type { ControlPlaneContext } from '../context.ts';
import { toApiError } from '../nginx-error.ts';

/** Notifications refused before any rule looked at them, counted as errors by this reason. */
const REFUSALS: ReadonlyMap<number, string> = new Map([
  [400, 'invalid_payload'],
  [413, 'invalid_payload'],
  [415, 'invalid_payload'],
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [421, 'forbidden'],
  [405, 'read_only'],
]);

/** How often pending `min_hold` reverts are looked for. */
const SWEEP_INTERVAL_MS = 1000;

interface FastifyValidationError {
  validation?: readonly { instancePath?: string; message?: string }[];
}

export function alertmanagerHookRoutes(
  app: FastifyInstance,
  ctx: ControlPlaneContext,
  rules: AlertRules | undefined,
): void {
  const operation = ctx.spec.operation('postAlertmanagerHook');
  const counters = rules ? new AutomationMetrics(ctx.metrics.registry) : null;
  const automation = rules && counters ? newAutomation(app, ctx, rules, counters) : null;
  for (const url of operation.routePaths) {
    app.route({
      method: operation.method,
      url,
      schema: operation.schema,
      config: { limitswitchOperation: operation },
      bodyLimit: rules?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      attachValidation: true,
      onRequest: async (request) => {
        if (!automation) {
          throw new LimitswitchError('PathNotFound', 'alert automation is not configured (--alert-rules)');
        }
        request.limitswitchPrincipal = authorizeHook(ctx.access, request.ip, request.headers.authorization);
        ctx.browser.checkWrite(writeRequestHead(request));
      },
      onError: async (_request, _reply, error) => {
        const reason = REFUSALS.get(toApiError(error).status);
        if (reason) counters?.countError('', reason);
      },
      handler: async (request: FastifyRequest) => {
        if (request.validationError) throw payloadError(request.validationError as FastifyValidationError);
        const actor = { tokenId: request.limitswitchPrincipal?.tokenId ?? null, client: request.ip };
        return automation!.handle(request.body as AlertmanagerNotification, actor);
      },
    });
  }
  if (automation && rules!.rules.some((rule) => rule.minHoldMs > 0)) startSweeper(app, automation);
}

function newAutomation(
  app: FastifyInstance,
  ctx: ControlPlaneContext,
  rules: AlertRules,
  counters: AutomationMetrics,
): AlertAutomation {
  app.log.info({ rules: rules.rules.length, source: rules.source }, 'alert automation enabled');
  return new AlertAutomation(rules, {
    call: (op, fn) => ctx.gateway.call(op, fn),
    clock: ctx.clock,
    zoneInfo: (name) => ctx.zones.keyvalZone(name),
    checkKey: (zone, key) => {
      if (!isKeyvalKey(zone.type, key)) {
        return `key "${key}" is not an address or CIDR (zone "${zone.name}" is type=ip)`;
      }
      return unstorableKey(key) === null ? null : `key "${key}" holds a NUL or a lone surrogate`;
    },
    counters,
    log: app.log,
    mutated: (zone, op) => ctx.metrics.countMutation(zone, op),
  });
}

/** Bearer as for API writes; Basic `<id>:<token>` as the bearer `<token>` of that id. */
export function authorizeHook(
  access: AccessControl,
  client: string,
  authorization: string | undefined,
): Principal {
  const basic = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(authorization ?? '');
  if (!basic) return access.authorizeWrite(client, authorization);
  const credentials = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  const id = credentials.slice(0, Math.max(colon, 0));
  const token = credentials.slice(colon + 1);
  if (colon < 0 || !/^\S+$/.test(token))
    throw new LimitswitchError('Unauthorized', 'invalid basic credentials');
  const principal = access.authorizeWrite(client, `Bearer ${token}`);
  if (principal.tokenId !== null && principal.tokenId !== id)
    throw new LimitswitchError('Unauthorized', 'invalid token');
  return principal;
}

function payloadError(error: FastifyValidationError): LimitswitchError {
  const first = error.validation?.[0];
  const where = first?.instancePath ? first.instancePath : '(body)';
  return new LimitswitchError(
    'AlertFormatError',
    `invalid Alertmanager notification: ${where} ${first?.message ?? ''}`.trim(),
  );
}

function startSweeper(app: FastifyInstance, automation: AlertAutomation): void {
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      inFlight ??= automation
        .sweep({ tokenId: null, client: 'automation' })
        .then(
          () => undefined,
          (err: unknown) => app.log.warn({ err }, 'alert automation sweep failed'),
        )
        .finally(() => {
          inFlight = null;
        });
    }, SWEEP_INTERVAL_MS);
    timer.unref();
  });
  // The store is closed after the app: let a sweep in progress finish first.
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    await inFlight;
  });
}
