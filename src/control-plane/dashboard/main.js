/**
 * The dashboard's loop: every second, read the API's JSON views in parallel and redraw each section
 * from its own answer (a failing view shows its error and leaves the others alone). Counter totals are
 * kept in a history so rates can be charted; nothing else is kept between polls.
 */
import { getJson, setToken, token } from './api.js';
import { auditView, automationView, replicasView } from './cluster-panels.js';
import { h, show } from './dom.js';
import { limitConnsView, priorityLevelsView, upstreamsView, zoneSyncView } from './limiter-panels.js';
import { CounterHistory, WINDOW_MS } from './rates.js';
import { ratesView } from './rates-view.js';
import { SwitchDialog } from './switch-dialog.js';
import { switchesView } from './switches.js';

const POLL_MS = 1000;
const AUDIT_ROWS = 25;

const VIEWS = {
  keyvals: '/cluster/keyvals',
  automation: '/cluster/automation',
  limitReqs: '/limit_reqs',
  limitReqsByReplica: '/limit_reqs?by=replica',
  replicas: '/cluster/replicas',
  audit: `/audit?limit=${AUDIT_ROWS}`,
  limitConns: '/limit_conns',
  limitConnsByReplica: '/limit_conns?by=replica',
  upstreams: '/api/9/http/upstreams',
  priorityLevels: '/api/9/http/priority_levels',
  zoneSync: '/api/9/stream/zone_sync',
};

/**
 * Views answered 405: a replica's own status API (`--status-listen`) serves this page over the
 * replica's view of the store, which has no alert records. They are not asked again.
 */
const unavailable = new Set();
const UNAVAILABLE_TEXT = 'Not served here (a replica’s status API): open the control plane’s dashboard.';

const history = new CounterHistory();
const dialog = new SwitchDialog(() => void poll());
let polls = 0;
let timer = null;

function body(id) {
  return document.querySelector(`#${id} .body`);
}

function rateView() {
  return document.querySelector('input[name="rate-view"]:checked')?.value ?? 'cluster';
}

/** Draw a section from its views, or say why it cannot be drawn. */
function draw(id, answers, names, render) {
  if (names.some((name) => unavailable.has(name))) {
    show(body(id), h('p', { class: 'empty' }, UNAVAILABLE_TEXT));
    return;
  }
  const failed = names.map((name) => answers[name]).find((a) => a.status === 'rejected');
  if (failed) {
    show(body(id), h('p', { class: 'error' }, failed.reason.message));
    return;
  }
  show(body(id), render(...names.map((name) => answers[name].value)));
}

/** The operator is typing into a form of the switches, or the dialog is open: do not redraw under them. */
function switchesBusy() {
  const active = document.activeElement;
  return (
    document.getElementById('confirm').open || (active?.tagName === 'INPUT' && active.closest('#switches'))
  );
}

async function poll() {
  clearTimeout(timer);
  const names = Object.keys(VIEWS).filter((name) => !unavailable.has(name));
  const settled = await Promise.allSettled(names.map((name) => getJson(VIEWS[name])));
  const answers = Object.fromEntries(names.map((name, i) => [name, settled[i]]));
  for (const [name, answer] of Object.entries(answers)) {
    if (answer.status === 'rejected' && answer.reason.status === 405) unavailable.add(name);
  }
  const atMs = Date.now();
  if (answers.limitReqs.status === 'fulfilled' && answers.limitReqsByReplica.status === 'fulfilled') {
    history.add(atMs, { cluster: answers.limitReqs.value, ...answers.limitReqsByReplica.value });
  }
  if (!switchesBusy()) {
    // Holds only mark keys: a view without them (a replica's status port has none) still draws.
    const automation = answers.automation?.status === 'fulfilled' ? answers.automation.value : null;
    draw('switches', answers, ['keyvals'], (zones) => switchesView(zones, automation, dialog));
  }
  draw('rates', answers, ['limitReqs'], () => ratesView(history, rateView(), atMs));
  draw('replicas', answers, ['replicas'], replicasView);
  draw('automation', answers, ['automation'], automationView);
  draw('audit', answers, ['audit'], auditView);
  draw('limit-conns', answers, ['limitConns', 'limitConnsByReplica'], limitConnsView);
  draw('upstreams', answers, ['upstreams'], upstreamsView);
  draw('priority-levels', answers, ['priorityLevels'], priorityLevelsView);
  draw('zone-sync', answers, ['zoneSync'], zoneSyncView);
  showStatus(settled, atMs);
  polls += 1;
  document.body.dataset.polls = String(polls);
  timer = setTimeout(() => void poll(), POLL_MS);
}

function showStatus(settled, atMs) {
  const status = document.getElementById('status');
  const unauthorized = settled.some((s) => s.status === 'rejected' && s.reason.status === 401);
  const failures = settled.filter((s) => s.status === 'rejected' && s.reason.status !== 405).length;
  status.className = failures === 0 ? 'status ok' : 'status failing';
  status.textContent = unauthorized
    ? 'reads need a token: enter it above'
    : failures === 0
      ? `live · updated ${new Date(atMs).toLocaleTimeString()}`
      : `${failures} of ${settled.length} views failing · ${new Date(atMs).toLocaleTimeString()}`;
}

function setUpToken() {
  const form = document.getElementById('token-form');
  const input = document.getElementById('token');
  const state = document.getElementById('token-state');
  const refresh = () => {
    state.textContent = token() === '' ? 'no token (loopback writes only)' : 'token set for this tab';
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    input.value = '';
    refresh();
    void poll();
  });
  document.getElementById('token-forget').addEventListener('click', () => {
    setToken('');
    refresh();
    void poll();
  });
  refresh();
}

setUpToken();
const windowMinutes = WINDOW_MS / 60_000;
document.getElementById('rate-window').textContent =
  `${windowMinutes} minute${windowMinutes === 1 ? '' : 's'}`;
for (const radio of document.querySelectorAll('input[name="rate-view"]')) {
  radio.addEventListener('change', () => show(body('rates'), ratesView(history, rateView(), Date.now())));
}
void poll();
