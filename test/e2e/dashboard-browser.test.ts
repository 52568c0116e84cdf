/**
 * The dashboard in a real browser (Debian's headless Chromium) against the cafe cluster in separate
 * processes: a real Redis, a control plane with a token, two replicas.
 *
 * 1. The page loads without console errors and, once given the token, shows the switches, both
 *    replicas and every panel.
 * 2. Load at /coffee (the server-wide switch on, /coffee's off): the page's perserver counters rise to
 *    exactly what the clients saw, and its chart draws a rate.
 * 3. With the server-wide switch off again, the /coffee toggle asks first (nothing is written on the
 *    click), then writes through the API with the token and `?wait=applied`, shows each replica
 *    applying it, and /coffee is limited by its own zone (req_zone_20) on every replica: the page's
 *    per-replica view shows exactly the 200s and 503s each replica answered.
 * 4. At 1400 px and at 800 px wide (a fresh page each): nothing is wider than its box (the page, each
 *    panel and its body), chart labels keep to the page's small print and overlap neither each other
 *    nor the plot, the audit trail's reasons show whole, and an idle zone's chart draws no line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type HeadlessChromium, launchChromium } from '../helpers/chromium.ts';
import { type CafeCluster, startCafeCluster } from './cafe-cluster.ts';
import { settledCounters, toggle } from './cafe-counters.ts';
import { CafeLoad, countStatus, lastAnswer, type Shot } from './cafe-load.ts';

const REPLICAS = 2;
const TOKEN_ID = 'operator';
const TOKEN = 'dashboard-e2e-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
/** perserver is 50 r/s with no burst on each replica: requests this far apart all pass it. */
const GENTLE_GAP_MS = 40;
const PAGE_TIMEOUT_MS = 20_000;

/** The page's `document`, as far as the functions run in it use it (the project has no DOM types). */
declare const document: {
  readonly documentElement: PageElement;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  getElementById(id: string): PageElement | null;
};
interface PageElement {
  readonly textContent: string | null;
  readonly id: string;
  readonly scrollWidth: number;
  readonly clientWidth: number;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number };
}

/**
 * What is wrong with the page's layout, measured in the page: every element wider than its box
 * (`scrollWidth` beyond `clientWidth`: the page, each panel and each panel's body), each chart label
 * more than 16 px high or overlapping another label, the plotted area or a drawn series, and each
 * audit reason cell not wholly inside its panel's visible box or cut inside itself. Empty lists when
 * the layout is sound.
 */
function layoutFaults() {
  const overflow: string[] = [];
  const wider = (name: string, el: PageElement) => {
    if (el.scrollWidth > el.clientWidth)
      overflow.push(`${name}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`);
  };
  wider('page', document.documentElement);
  for (const section of Array.from(document.querySelectorAll('main > section'))) {
    wider(`#${section.id}`, section);
    wider(`#${section.id} .body`, section.querySelector('.body')!);
  }
  const box = (el: PageElement) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  };
  type Box = ReturnType<typeof box>;
  const meet = (a: Box, b: Box) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const chart: string[] = [];
  let labels = 0;
  let tallest = 0;
  for (const block of Array.from(document.querySelectorAll('#rates [data-zone] [data-series]'))) {
    const where = block.querySelector('svg.chart')?.getAttribute('aria-label');
    const scales = Array.from(block.querySelectorAll('.scale')).map((el) => ({
      text: el.textContent,
      box: box(el),
    }));
    labels += scales.length;
    // The plotted area (the chart's frame) and each series drawn in it.
    const series = Array.from(block.querySelectorAll('svg.chart .frame, svg.chart polyline')).map((el) => ({
      text: el.getAttribute('data-field') ?? 'the plotted area',
      box: box(el),
    }));
    for (const [i, label] of scales.entries()) {
      const height = label.box.bottom - label.box.top;
      tallest = Math.max(tallest, height);
      if (height > 16) chart.push(`${where}: label "${label.text}" is ${height.toFixed(1)} px high`);
      for (const other of [...scales.slice(i + 1), ...series])
        if (meet(label.box, other.box))
          chart.push(`${where}: label "${label.text}" overlaps "${other.text}"`);
    }
  }
  const reason: string[] = [];
  const audit = document.getElementById('audit')!;
  const visible = box(audit);
  const cells = Array.from(audit.querySelectorAll('td.reason'));
  for (const cell of cells) {
    const b = box(cell);
    if (b.right > visible.right || b.left < visible.left)
      reason.push(
        `"${cell.textContent}": ${b.left.toFixed(0)}–${b.right.toFixed(0)} px, the panel ${visible.left.toFixed(0)}–${visible.right.toFixed(0)} px`,
      );
    if (cell.scrollWidth > cell.clientWidth)
      reason.push(`"${cell.textContent}": scrollWidth ${cell.scrollWidth} > clientWidth ${cell.clientWidth}`);
  }
  return { overflow, chart, reason, labels, tallest, reasons: cells.length };
}

describe('the dashboard in headless Chromium: 2 replicas, a control plane, Redis', {
  timeout: 240_000,
}, () => {
  let cluster: CafeCluster;
  let load: CafeLoad;
  let browser: HeadlessChromium;
  let dir: string;

  before(async () => {
    // Every step is bounded (the browser's start, the cluster's, each toggle), so a stall fails here
    // with its name instead of running out the suite's time.
    browser = await launchChromium();
    dir = mkdtempSync(join(tmpdir(), 'limitswitch-dashboard-'));
    const tokenFile = join(dir, 'tokens');
    writeFileSync(tokenFile, `${TOKEN_ID}:${TOKEN}\n`);
    cluster = await startCafeCluster(REPLICAS, { controlPlaneArgs: ['--token-file', tokenFile] });
    load = new CafeLoad(
      cluster.replicas.map((r) => r.url),
      8,
    );
    for (const [zone, entries] of [
      ['limitreq_uri', { '/coffee': '0' }],
      ['limitper_server', { 'cafe.example.com': '1' }],
    ] as const) {
      const seeded = await toggle(cluster.controlPlaneUrl, 'POST', zone, entries, true, AUTH);
      assert.equal(seeded.status, 201, seeded.body);
    }
  });

  after(async () => {
    await browser?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const text = (selector: string) => browser.page.locator(selector).first().textContent();
  /** Wait until the element's text is `expected` (the page redraws every second). */
  const waitForText = (selector: string, expected: string) =>
    browser.page.waitForFunction(
      ([s, e]) => document.querySelector(s!)?.textContent?.trim() === e,
      [selector, expected],
      { timeout: PAGE_TIMEOUT_MS },
    );
  const total = (zone: string, series: string, field: string) =>
    `#rates [data-zone="${zone}"] [data-series="${series}"] [data-field="${field}"] .total`;

  it('loads without errors and, given the token, shows the switches, the replicas and every panel', async () => {
    const { page } = browser;
    await page.goto(`${cluster.controlPlaneUrl}/dashboard`);
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type="submit"]');
    await waitForText('#token-state', 'token set for this tab');
    await waitForText('[data-switch="limitreq_uri /coffee"] .value', '0');
    await waitForText('[data-switch="limitper_server cafe.example.com"] .value', '1');
    for (const replica of cluster.replicas) {
      await waitForText(`#replicas [data-replica="${replica.id}"] .badge`, 'live');
    }
    // The replicas run one configuration on other ports: the page shows them one config hash.
    const hashes = await page.locator('#replicas [data-replica] td:nth-child(4)').allTextContents();
    assert.equal(hashes.length, REPLICAS);
    assert.deepEqual(new Set(hashes).size, 1, `config hashes shown: ${hashes.join(', ')}`);
    const panels = ['automation', 'audit', 'limit-conns', 'upstreams', 'priority-levels', 'zone-sync'];
    for (const id of panels) {
      const body = (await text(`#${id} .body`)) ?? '';
      assert.doesNotMatch(body, /loading…/, id);
      assert.equal(await page.locator(`#${id} .error`).count(), 0, `${id}: ${body}`);
    }
    assert.match((await text('#upstreams .body')) ?? '', /coffee/);
    assert.match((await text('#status')) ?? '', /^live · updated/);
    assert.deepEqual(browser.errors, []);
  });

  it('shows a zone’s counters rising under load at /coffee, to exactly what clients saw', async () => {
    const before = await settledCounters(cluster.controlPlaneUrl, performance.now());
    const shots: Shot[] = [];
    for (let i = 0; i < 25; i++) {
      const round = cluster.replicas.map((_, r) => load.get(r, '/coffee', `10.0.3.${r + 1}`));
      shots.push(...(await Promise.all(round)));
      // Load shape, not synchronisation: keep under perserver's rate so every request passes.
      await sleep(GENTLE_GAP_MS);
    }
    assert.deepEqual(countStatus(shots, 200, REPLICAS), [25, 25]);
    const passedBefore = before.totals.perserver?.passed ?? 0;
    const settled = await settledCounters(cluster.controlPlaneUrl, lastAnswer(shots));
    assert.equal(settled.totals.perserver?.passed, passedBefore + 50);
    // /coffee's own switch is off: its zone counted nothing.
    assert.equal(settled.totals.req_zone_20?.passed ?? 0, 0);
    await waitForText(total('perserver', 'cluster', 'passed'), String(passedBefore + 50));
    const peak = await browser.page.waitForFunction(
      () => {
        const chart = document.querySelector('#rates [data-zone="perserver"] svg.chart');
        const peakPerS = Number(chart?.getAttribute('data-peak-per-s'));
        return chart?.querySelector('polyline[data-field="passed"]') && peakPerS > 0 ? peakPerS : null;
      },
      null,
      { timeout: PAGE_TIMEOUT_MS },
    );
    assert.ok(((await peak.jsonValue()) as number) > 0);
    assert.deepEqual(browser.errors, []);
  });

  it('toggles /coffee after confirmation, shows each replica apply it, and /coffee is limited everywhere', async () => {
    const { page } = browser;
    // The server-wide limit off: /coffee's own zone is then the only one deciding its requests (with
    // both on, perserver's burst of 0 turns a burst away before req_zone_20 would).
    const serverOff = await toggle(
      cluster.controlPlaneUrl,
      'PATCH',
      'limitper_server',
      { 'cafe.example.com': '0' },
      true,
      AUTH,
    );
    assert.equal(serverOff.status, 204, serverOff.body);
    const coffee = '[data-switch="limitreq_uri /coffee"]';
    await page.click(`${coffee} button.toggle`);
    await page.waitForSelector('#confirm[open]');
    assert.equal(
      await text('#confirm-what'),
      'Set limitreq_uri "/coffee" to "1" (now "0") on every replica.',
    );
    assert.equal(await page.isDisabled('#confirm-ttl'), true, 'the zone has no timeout=: no TTL');
    const keyval = async () =>
      (await fetch(`${cluster.controlPlaneUrl}/api/9/http/keyvals/limitreq_uri`)).json();
    assert.deepEqual(await keyval(), { '/coffee': '0' }, 'the click alone writes nothing');

    await page.fill('#confirm-reason', 'coffee is overloaded');
    await page.click('#confirm-apply');
    await page.waitForFunction(
      (n) =>
        document.getElementById('confirm-result')?.textContent?.startsWith('Applied on every live replica') &&
        document.querySelectorAll('#confirm-progress li.applied').length === n,
      REPLICAS,
      { timeout: PAGE_TIMEOUT_MS },
    );
    const progress = await page.locator('#confirm-progress li').allTextContents();
    assert.deepEqual(
      progress.map((line) => line.replace(/[0-9]+$/, 'N')),
      cluster.replicas.map((r) => `${r.id}: applied revision N`),
    );
    assert.deepEqual(await keyval(), { '/coffee': '1' });
    const [entry] = (await (await fetch(`${cluster.controlPlaneUrl}/audit?limit=1`)).json()) as Record<
      string,
      unknown
    >[];
    assert.deepEqual(
      [entry!.token_id, entry!.zone, entry!.key, entry!.old, entry!.new, entry!.reason],
      [TOKEN_ID, 'limitreq_uri', '/coffee', '0', '1', 'coffee is overloaded'],
    );
    await page.click('#confirm-cancel');
    await waitForText(`${coffee} .value`, '1');
    assert.match((await text(`${coffee} .who`)) ?? '', /^operator at .* — coffee is overloaded$/);

    // A burst from one client on each replica: beyond req_zone_20's burst of 1.
    const shots = (
      await Promise.all(
        cluster.replicas.map((_, r) =>
          Promise.all(Array.from({ length: 6 }, () => load.get(r, '/coffee', '10.0.4.1'))),
        ),
      )
    ).flat();
    const rejected = countStatus(shots, 503, REPLICAS);
    assert.ok(
      rejected.every((n) => n >= 1),
      `503s per replica: ${rejected}`,
    );
    const settled = await settledCounters(cluster.controlPlaneUrl, lastAnswer(shots));
    await page.check('input[name="rate-view"][value="replica"]');
    const passed = countStatus(shots, 200, REPLICAS);
    for (const [i, replica] of cluster.replicas.entries()) {
      // Every answer on this replica was req_zone_20's: its counters are what the client saw.
      const counted = settled.byReplica[replica.id]?.req_zone_20;
      assert.deepEqual([counted?.passed, counted?.rejected], [passed[i], rejected[i]], replica.id);
      await waitForText(total('req_zone_20', replica.id, 'rejected'), String(rejected[i]));
      await waitForText(total('req_zone_20', replica.id, 'passed'), String(passed[i]));
    }
    assert.deepEqual(browser.errors, []);
  });

  it('lays out at 1400 px and at 800 px wide: nothing scrolls sideways, chart labels stay apart, reasons show whole', async (t) => {
    // The audit trail now holds a reason (the toggle above); the charts have drawn load at /coffee.
    const found: Record<number, unknown> = {};
    const sound: Record<number, unknown> = {};
    for (const width of [1400, 800]) {
      const page = await browser.context.newPage();
      try {
        await page.setViewportSize({ width, height: 1000 });
        // The test runs through tsx, which names inner functions with a `__name` helper the page lacks.
        await page.addInitScript({ content: 'globalThis.__name = (f) => f;' });
        await page.goto(`${cluster.controlPlaneUrl}/dashboard`);
        await page.fill('#token', TOKEN);
        await page.click('#token-form button[type="submit"]');
        const chart20 = '#rates [data-zone="req_zone_20"] svg.chart';
        await page.waitForFunction(
          (chart) =>
            Array.from(document.querySelectorAll('#audit td.reason')).some(
              (cell) => cell.textContent === 'coffee is overloaded',
            ) && document.querySelector(chart) !== null,
          chart20,
          { timeout: PAGE_TIMEOUT_MS },
        );
        // The page's rates start with its first sample: a burst at /coffee now gives its chart lines
        // to lay out (passed and rejected, req_zone_20's burst of 1 is exceeded).
        await Promise.all(
          cluster.replicas.map((_, r) =>
            Promise.all(Array.from({ length: 6 }, () => load.get(r, '/coffee', `10.0.5.${width % 7}`))),
          ),
        );
        await page.waitForFunction(
          (chart) => Number(document.querySelector(chart)?.getAttribute('data-peak-per-s')) > 0,
          chart20,
          { timeout: PAGE_TIMEOUT_MS },
        );
        const faults = await page.evaluate(layoutFaults);
        assert.ok(faults.labels >= 3, `${width} px: ${faults.labels} chart labels`);
        assert.ok(faults.reasons >= 1, `${width} px: ${faults.reasons} reasons`);
        t.diagnostic(`${width} px: the tallest chart label is ${faults.tallest.toFixed(1)} px`);
        // An idle zone (/tea's, no traffic in this suite) draws no series: nothing red, nothing at all.
        const idle = await page.evaluate(() => ({
          peak: document
            .querySelector('#rates [data-zone="req_zone_10"] svg.chart')
            ?.getAttribute('data-peak-per-s'),
          lines: document.querySelectorAll('#rates [data-zone="req_zone_10"] svg.chart polyline').length,
        }));
        found[width] = { overflow: faults.overflow, chart: faults.chart, reason: faults.reason, idle };
        sound[width] = { overflow: [], chart: [], reason: [], idle: { peak: '0.00', lines: 0 } };
      } finally {
        await page.close();
      }
    }
    // Both widths measured before judging, so a failure shows every fault at once.
    assert.deepEqual(found, sound);
    assert.deepEqual(browser.errors, []);
  });
});
