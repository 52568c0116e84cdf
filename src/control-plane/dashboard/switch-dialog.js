/**
 * The confirmation of a switch change: what changes, an optional TTL (only where the zone has
 * `timeout=`), a reason for the audit trail; then the write with `?wait=applied` and, replica by
 * replica, when each applied the new revision. Nothing is written before "Apply" is clicked.
 */
import { getJson, writeSwitch } from './api.js';
import { h, show } from './dom.js';

const PROGRESS_POLL_MS = 100;
/** After a 202, how long the page keeps watching the laggards. */
const FOLLOW_UP_MS = 30_000;

export class SwitchDialog {
  #dialog = document.getElementById('confirm');
  #ttl = document.getElementById('confirm-ttl');
  #reason = document.getElementById('confirm-reason');
  #apply = document.getElementById('confirm-apply');
  #cancel = document.getElementById('confirm-cancel');
  #progress = document.getElementById('confirm-progress');
  #result = document.getElementById('confirm-result');
  #change = null;
  #onDone;

  /** `onDone` is called after every write (the page refreshes at once). */
  constructor(onDone) {
    this.#onDone = onDone;
    this.#apply.addEventListener('click', (event) => {
      event.preventDefault();
      void this.#run();
    });
    this.#cancel.addEventListener('click', () => this.#dialog.close());
  }

  /**
   * Ask before changing `zone`/`key` to `value` (`null`: delete). `zoneInfo` is the zone as
   * `/cluster/keyvals` gives it; `current` the key's value, `null` when absent.
   */
  open({ zone, key, value, current, zoneInfo }) {
    this.#change = { zone, key, value, exists: current !== null, timeoutMs: zoneInfo.timeout_ms };
    const what =
      value === null
        ? `Delete "${key}" (now "${current}") from ${zone} on every replica.`
        : `Set ${zone} "${key}" to "${value}"${current === null ? '' : ` (now "${current}")`} on every replica.`;
    document.getElementById('confirm-what').textContent = what;
    const ttlAllowed = value !== null && zoneInfo.timeout_ms !== null;
    this.#ttl.value = '';
    this.#ttl.disabled = !ttlAllowed;
    document.getElementById('confirm-ttl-note').textContent = ttlAllowed
      ? `Empty: the zone's timeout (${zoneInfo.timeout_ms / 1000} s).`
      : value === null
        ? ''
        : 'This zone has no timeout=, so its keys cannot expire.';
    this.#reason.value = '';
    show(this.#progress);
    this.#result.textContent = '';
    this.#apply.hidden = false;
    this.#apply.disabled = false;
    this.#cancel.textContent = 'Cancel';
    this.#dialog.showModal();
  }

  async #run() {
    const change = this.#change;
    const ttlS = this.#ttl.disabled || this.#ttl.value === '' ? null : Number(this.#ttl.value);
    if (ttlS !== null && !(Number.isInteger(ttlS) && ttlS > 0)) {
      this.#result.textContent = 'The TTL is a whole number of seconds above zero.';
      return;
    }
    this.#apply.disabled = true;
    this.#result.textContent = 'Writing…';
    const before = await getJson('/cluster/replicas').catch(() => null);
    let target = (before?.revision ?? 0) + 1;
    let writing = true;
    const watch = this.#watch(
      () => target,
      () => writing,
    );
    try {
      const { revision, laggards } = await writeSwitch({
        ...change,
        expireMs: ttlS === null ? null : ttlS * 1000,
        reason: this.#reason.value.trim(),
      });
      target = revision;
      if (laggards.length === 0) {
        this.#result.textContent = `Applied on every live replica (revision ${revision}).`;
        writing = false;
      } else {
        this.#result.textContent = `Written (revision ${revision}); waiting for ${laggards.map((l) => l.id).join(', ')}.`;
        setTimeout(() => {
          writing = false;
        }, FOLLOW_UP_MS);
      }
    } catch (err) {
      writing = false;
      this.#result.textContent = `Not written: ${err.message}`;
    } finally {
      this.#apply.hidden = true;
      this.#cancel.textContent = 'Close';
      this.#onDone();
    }
    await watch;
  }

  /** Show every live replica's applied revision against the target until `active()` turns false. */
  async #watch(target, active) {
    for (;;) {
      // The last poll starts after the write ended, so it shows the final state.
      const last = !active();
      const replicas = await getJson('/cluster/replicas').catch(() => null);
      if (replicas) this.#showProgress(replicas.replicas, target());
      if (last) return;
      await new Promise((resolve) => setTimeout(resolve, PROGRESS_POLL_MS));
    }
  }

  #showProgress(replicas, revision) {
    const rows = replicas
      .filter((r) => r.state !== 'gone')
      .map((r) => {
        const done = r.applied_revision >= revision && r.state !== 'diverged';
        return h(
          'li',
          { class: done ? 'applied' : 'waiting', 'data-replica': r.id },
          `${r.id}: ${done ? `applied revision ${r.applied_revision}` : `at revision ${r.applied_revision}, waiting`}`,
        );
      });
    show(this.#progress, rows);
  }
}
