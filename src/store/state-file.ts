/**
 * The replica's local state file (like NGINX Plus `keyval_zone … state=`): the applied keyval mirror as
 * JSON, so a replica that starts while the store is away enforces the last known switches. Written
 * atomically (temporary file, fsync, rename): a crash leaves the old file or the new one, never half.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { LimitswitchError } from '../shared/errors.ts';
import type { KeyvalEntry, KeyvalSnapshot } from './keyval-store.ts';

interface StateFileContent {
  readonly version: 1;
  readonly savedAtMs: number;
  readonly revision: number;
  /** The commit id of `revision` (absent in files written before commit ids). */
  readonly commit?: string;
  readonly epoch: string | null;
  readonly zones: Record<string, Record<string, KeyvalEntry>>;
}

/** Write `snapshot` to `path` atomically. */
export async function writeStateFile(path: string, snapshot: KeyvalSnapshot, nowMs: number): Promise<void> {
  const content: StateFileContent = {
    version: 1,
    savedAtMs: nowMs,
    revision: snapshot.revision,
    commit: snapshot.commit ?? '',
    epoch: snapshot.epoch ?? null,
    zones: snapshot.zones as Record<string, Record<string, KeyvalEntry>>,
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

/** The snapshot saved in `path`; `null` when there is no file. A damaged file is an error. */
export async function readStateFile(path: string): Promise<KeyvalSnapshot | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw unreadable(path, (err as Error).message, err);
  }
  let content: StateFileContent;
  try {
    content = JSON.parse(text) as StateFileContent;
  } catch (err) {
    throw unreadable(path, 'not JSON', err);
  }
  if (
    content?.version !== 1 ||
    !Number.isSafeInteger(content.revision) ||
    typeof content.zones !== 'object'
  ) {
    throw unreadable(path, 'not a limitswitch state file (version 1)');
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
  const position = {
    revision: content.revision,
    commit: typeof content.commit === 'string' ? content.commit : '',
    zones: content.zones,
  };
  return content.epoch === null ? position : { ...position, epoch: content.epoch };
}

function unreadable(path: string, why: string, cause?: unknown): LimitswitchError {
  return new LimitswitchError('RL_ERR_STORE_STATE_FILE', `keyval state file ${path}: ${why}`, { cause });
}
