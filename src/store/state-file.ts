/**
 * The replica's local state file (like NGINX Plus `keyval_zone … state=`): the applied keyval mirror,
 * so a replica that starts while the store is away enforces the last known switches, and the counter
 * batches the store has not acknowledged yet, so counts taken before a shutdown during an outage are
 * flushed by the next start. Written atomically (temporary file, fsync, rename): a crash leaves the
 * old file or the new one, never half. Writes never overlap; each writes both parts.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import type { Clock } from '../shared/clock.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { CounterBatch } from './counter-store.ts';
import type { KeyvalEntry, KeyvalSnapshot } from './keyval-store.ts';

interface StateFileContent {
  /** 1: keyvals only; 2: keyvals and counter batches. */
  readonly version: 1 | 2;
  readonly savedAtMs: number;
  readonly revision: number;
  /** The commit id of `revision` (absent in files written before commit ids). */
  readonly commit?: string;
  readonly epoch: string | null;
  readonly zones: Record<string, Record<string, KeyvalEntry>>;
  readonly counters?: CounterBatch[];
}

/** What a state file holds. */
export interface SavedState {
  /** `null` when nothing was saved yet. */
  readonly keyvals: KeyvalSnapshot | null;
  /** Counter batches not acknowledged by the store when they were saved, oldest first. */
  readonly counters: readonly CounterBatch[];
}

const EMPTY: SavedState = { keyvals: null, counters: [] };

export class StateFile {
  readonly path: string;
  readonly #clock: Clock;
  #state: SavedState = EMPTY;
  #loaded: Promise<SavedState> | null = null;
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string, clock: Clock) {
    this.path = path;
    this.#clock = clock;
  }

  /**
   * What the file held when first asked (read once: the sync and the counter flusher both ask); both
   * parts empty when there is no file. A damaged file is an error (`RL_ERR_STORE_STATE_FILE`); the
   * next save replaces it.
   */
  load(): Promise<SavedState> {
    this.#loaded ??= readStateFile(this.path).then((state) => {
      this.#state = { keyvals: this.#state.keyvals ?? state.keyvals, counters: state.counters };
      return state;
    });
    return this.#loaded;
  }

  /** Save one part (the other as last loaded or saved); resolves when this write is done. */
  save(part: { keyvals?: KeyvalSnapshot; counters?: readonly CounterBatch[] }): Promise<void> {
    this.#state = { ...this.#state, ...part };
    const state = this.#state;
    this.#writing = this.#writing
      .catch(() => {})
      .then(() => writeState(this.path, state, this.#clock.nowMs()));
    return this.#writing;
  }
}

async function writeState(path: string, state: SavedState, nowMs: number): Promise<void> {
  const snapshot = state.keyvals ?? { revision: 0, zones: {} };
  const content: StateFileContent = {
    version: 2,
    savedAtMs: nowMs,
    revision: snapshot.revision,
    commit: snapshot.commit ?? '',
    epoch: snapshot.epoch ?? null,
    zones: snapshot.zones as Record<string, Record<string, KeyvalEntry>>,
    counters: [...state.counters],
  };
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(`${JSON.stringify(content)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

async function readStateFile(path: string): Promise<SavedState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
    throw unreadable(path, (err as Error).message, err);
  }
  let content: StateFileContent;
  try {
    content = JSON.parse(text) as StateFileContent;
  } catch (err) {
    throw unreadable(path, 'not JSON', err);
  }
  if (
    (content?.version !== 1 && content?.version !== 2) ||
    !Number.isSafeInteger(content.revision) ||
    typeof content.zones !== 'object' ||
    content.zones === null
  ) {
    throw unreadable(path, 'not a limitswitch state file (version 1 or 2)');
  }
  for (const entries of Object.values(content.zones)) {
    for (const entry of Object.values(entries)) {
      if (
        typeof entry?.value !== 'string' ||
        !(entry.expireAtMs === null || Number.isFinite(entry.expireAtMs))
      ) {
        throw unreadable(path, 'bad entry');
      }
    }
  }
  const counters = content.counters ?? [];
  if (!Array.isArray(counters) || !counters.every(isCounterBatch))
    throw unreadable(path, 'bad counter batch');
  const position = {
    revision: content.revision,
    commit: typeof content.commit === 'string' ? content.commit : '',
    zones: content.zones,
  };
  const keyvals = content.epoch === null ? position : { ...position, epoch: content.epoch };
  return { keyvals, counters };
}

function isCounterBatch(batch: unknown): batch is CounterBatch {
  const b = batch as Partial<CounterBatch> | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    typeof b.replicaId === 'string' &&
    typeof b.incarnation === 'string' &&
    Number.isSafeInteger(b.seq) &&
    typeof b.deltas === 'object' &&
    b.deltas !== null
  );
}

function unreadable(path: string, why: string, cause?: unknown): LimitswitchError {
  return new LimitswitchError('RL_ERR_STORE_STATE_FILE', `keyval state file ${path}: ${why}`, { cause });
}
