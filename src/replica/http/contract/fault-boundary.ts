/**
 * The data path's fault boundary. Every callback the event loop makes into the data path on behalf of
 * one connection — a client socket's read, a TLS handshake, an HTTP/2 session or stream, an upstream
 * socket's read, a timer — catches what it throws and ends only that connection or stream: the
 * exception is a bug of ours or of a library met by one peer's bytes, and without the boundary it
 * would end the process and every other connection with it (nginx loses one worker's connections
 * at worst; its master starts another worker).
 *
 * A fault is reported once per process (nginx's `[alert]` line and a metric: replica.ts).
 *
 * Failpoints, for the tests that show the boundary holds: `LIMITSWITCH_FAILPOINTS=client,timer`
 * makes the next callback of each listed kind throw, once.
 */
import type { Socket } from 'node:net';
import type { Decision } from './decision.ts';

/** Where a fault was caught: which kind of callback threw. */
export type CallbackKind = 'client' | 'tls' | 'h2' | 'upstream' | 'timer';

export const CALLBACK_KINDS: readonly CallbackKind[] = ['client', 'tls', 'h2', 'upstream', 'timer'];

export interface DataPathFault {
  readonly kind: CallbackKind;
  readonly error: unknown;
  /** The client connection it concerns (its `*N` in the error log), when known. */
  readonly client: Socket | null;
}

/** What a fault ends: a socket, an HTTP/2 stream or session. */
export interface Endable {
  destroy(error?: Error): unknown;
}

/** Several connections ended as one (an upstream connection and the client connection it served). */
export function together(...ends: readonly (Endable | null | undefined)[]): Endable {
  return {
    destroy: () => {
      for (const end of ends) end?.destroy();
    },
  };
}

type Reporter = (fault: DataPathFault) => void;
const reporters: Reporter[] = [];

/** Faults go to the first reporter registered (one per process); returns its removal. */
export function reportDataPathFaults(reporter: Reporter): () => void {
  reporters.push(reporter);
  return () => {
    const at = reporters.indexOf(reporter);
    if (at !== -1) reporters.splice(at, 1);
  };
}

/**
 * A callback of `kind` threw `error`: `end` (the connection or stream it served) is destroyed and the
 * fault reported. Never throws.
 */
export function containFault(
  kind: CallbackKind,
  error: unknown,
  end: Endable | null,
  client: Socket | null,
): void {
  try {
    end?.destroy();
  } catch {
    // a stream or socket that cannot even be destroyed is left to its own close
  }
  const reporter = reporters[0];
  try {
    if (reporter === undefined)
      process.stderr.write(`data path fault in a ${kind} callback: ${describe(error)}\n`);
    else reporter({ kind, error, client });
  } catch {
    // reporting must not be the next fault
  }
}

/** The error's text and where it was thrown (its first stack frame), for the log. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const frame = error.stack
    ?.split('\n')
    .find((line) => line.trimStart().startsWith('at '))
    ?.trim();
  return frame === undefined ? String(error) : `${String(error)} ${frame}`;
}

/** Kinds armed to throw once (a bit per kind). */
let armed = 0;

function parseFailpoints(text: string | undefined): void {
  for (const name of (text ?? '').split(',')) {
    const at = CALLBACK_KINDS.indexOf(name.trim() as CallbackKind);
    if (at !== -1) armed |= 1 << at;
  }
}
parseFailpoints(process.env.LIMITSWITCH_FAILPOINTS);

/** Throws once for `kind` if its failpoint is armed (the first thing a guarded callback does). */
export function failpoint(kind: CallbackKind): void {
  if (armed === 0) return;
  const bit = 1 << CALLBACK_KINDS.indexOf(kind);
  if ((armed & bit) === 0) return;
  armed &= ~bit;
  throw new Error(`failpoint ${kind}`);
}

/**
 * `fn` behind the boundary, for callbacks off the hot path (hot ones catch inline): a throw ends
 * what `endOf` names for the callback's arguments — the connection or stream it served — and is
 * reported about the client connection `clientOf` names (the same, by default).
 */
export function guarded<A extends unknown[]>(
  kind: CallbackKind,
  fn: (...args: A) => void,
  endOf: (...args: A) => Endable | null,
  clientOf?: (...args: A) => Socket | null,
): (...args: A) => void {
  return (...args: A): void => {
    try {
      failpoint(kind);
      fn(...args);
    } catch (error) {
      const end = endOf(...args);
      containFault(kind, error, end, clientOf === undefined ? (end as Socket | null) : clientOf(...args));
    }
  };
}

/**
 * A timer of a request's admission (it decides what a waiting request does next): a throw is
 * reported and `fail` answers the request instead (500), so it is not left waiting.
 */
export function admissionTimer(fn: () => void, fail: () => void): () => void {
  return (): void => {
    try {
      failpoint('timer');
      fn();
    } catch (error) {
      containFault('timer', error, null, null);
      try {
        fail();
      } catch (again) {
        containFault('timer', again, null, null);
      }
    }
  };
}

/** The answer to a request whose admission faulted: nginx's 500 page. */
export const INTERNAL_ERROR = Object.freeze({ action: 'reject', code: 500 }) satisfies Decision;
