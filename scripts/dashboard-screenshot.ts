/**
 * Regenerates docs/dashboard.png (`npm run docs:screenshot`): the cafe example on two replicas and a
 * real Redis, a minute of mixed traffic (/tea limited from the start, /coffee switched on through the
 * page half-way, with a reason), then a screenshot of the whole page in headless Chromium.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCafeCluster } from '../test/e2e/cafe-cluster.ts';
import { toggle } from '../test/e2e/cafe-counters.ts';
import { CafeLoad } from '../test/e2e/cafe-load.ts';
import { launchChromium } from '../test/helpers/chromium.ts';

const TOKEN = 'dashboard-screenshot-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
/** Half before /coffee is switched on, half after. */
const TRAFFIC_MS = 60_000;
const TICK_MS = 100;
const TARGET = new URL('../docs/dashboard.png', import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), 'limitswitch-screenshot-'));
const tokenFile = join(dir, 'tokens');
writeFileSync(tokenFile, `operator:${TOKEN}\n`);
const cluster = await startCafeCluster(2, { controlPlaneArgs: ['--token-file', tokenFile] });
const browser = await launchChromium({ width: 1400, height: 900 });
try {
  const cp = cluster.controlPlaneUrl;
  await toggle(cp, 'POST', 'limitreq_uri', { '/tea': '1', '/coffee': '0' }, true, AUTH);
  await toggle(cp, 'POST', 'limitper_server', { 'cafe.example.com': '0' }, true, AUTH);
  const load = new CafeLoad(
    cluster.replicas.map((r) => r.url),
    8,
  );
  const { page } = browser;
  await page.goto(`${cp}/dashboard?minutes=1`);
  await page.fill('#token', TOKEN);
  await page.click('#token-form button[type="submit"]');

  // The traffic keeps running while the screenshot is taken, so the page shows live rates.
  let running = true;
  const traffic = (async () => {
    while (running) {
      const tick = performance.now();
      const shots: Promise<unknown>[] = [];
      for (let r = 0; r < cluster.replicas.length; r++) {
        // Two tea drinkers at 20 r/s each (the limit is 10), three coffee drinkers at 10 r/s, one at 30.
        for (const client of ['10.1.0.1', '10.1.0.2'])
          shots.push(load.get(r, '/tea', client), load.get(r, '/tea', client));
        for (const client of ['10.2.0.1', '10.2.0.2', '10.2.0.3']) shots.push(load.get(r, '/coffee', client));
        for (let i = 0; i < 3; i++) shots.push(load.get(r, '/coffee', '10.2.0.9'));
      }
      await Promise.all(shots);
      await sleep(Math.max(0, TICK_MS - (performance.now() - tick)));
    }
  })();
  await sleep(TRAFFIC_MS / 2);
  await page.click('[data-switch="limitreq_uri /coffee"] button.toggle');
  await page.fill('#confirm-reason', 'coffee upstream overloaded');
  await page.click('#confirm-apply');
  await page.waitForSelector('#confirm-progress li.applied');
  await page.click('#confirm-cancel');
  await sleep(TRAFFIC_MS / 2);
  await page.screenshot({ path: TARGET, fullPage: true });
  running = false;
  await traffic;
  if (browser.errors.length > 0) throw new Error(`the page logged errors:\n${browser.errors.join('\n')}`);
  console.log('wrote docs/dashboard.png');
} finally {
  await browser.close();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
