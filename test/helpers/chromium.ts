/**
 * Debian's headless Chromium driven by playwright-core, which never downloads a browser: the binary
 * is the system's, each launch gets a fresh profile (removed on close), and everything a browser
 * does on its own (updates, sync, background fetches, QUIC) is off so only the page talks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface HeadlessChromium {
  readonly context: BrowserContext;
  readonly page: Page;
  /** What the page logged at `error` level and the exceptions it threw, as text. */
  readonly errors: readonly string[];
  close(): Promise<void>;
}

/** One launch's bound: a healthy start takes about a second, even on a busy 2-core machine. */
const LAUNCH_TIMEOUT_MS = 30_000;
const LAUNCH_ATTEMPTS = 3;

export async function launchChromium(viewport = { width: 1400, height: 1000 }): Promise<HeadlessChromium> {
  const failures: string[] = [];
  for (let attempt = 1; attempt <= LAUNCH_ATTEMPTS; attempt++) {
    const profile = mkdtempSync(join(tmpdir(), 'limitswitch-chromium-'));
    try {
      return await openPage(profile, viewport);
    } catch (error) {
      // A browser that does not come up (its first start on a new machine can stall) is retried with
      // a fresh profile; each failure is kept so the last error tells the whole story.
      rmSync(profile, { recursive: true, force: true });
      failures.push(`attempt ${attempt}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`Chromium (${CHROMIUM_PATH}) did not start:\n${failures.join('\n')}`);
}

async function openPage(
  profile: string,
  viewport: { width: number; height: number },
): Promise<HeadlessChromium> {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport,
    timeout: LAUNCH_TIMEOUT_MS,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`exception: ${error.message}`));
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
