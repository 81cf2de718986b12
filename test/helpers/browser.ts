import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { ROOT } from './service';

/**
 * The real Chromium of the machine (/usr/bin/chromium, installed by apt; CI installs
 * it when it is missing) driven through playwright-core. `playwright install` is never
 * run: no browser is downloaded. Chromium resolves every `*.localhost` name to the
 * loopback address by itself, so studio origins need no hosts file.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const RESULTS_DIR = join(ROOT, 'test-results');
export type Scheme = 'light' | 'dark';
export const SCHEMES: readonly Scheme[] = ['light', 'dark'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A fresh context (its own cookies) with the given colour scheme and a laptop-sized viewport. */
export function newContext(browser: Browser, scheme: Scheme = 'light', options: BrowserContextOptions = {}): Promise<BrowserContext> {
  return browser.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 }, ...options });
}

/** Saves test-results/<name>-<scheme>.png (full page) and returns its path. */
export async function saveScreenshot(page: Page, name: string, scheme: Scheme): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-${scheme}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Collects what goes wrong in a page: uncaught exceptions, console errors and
 * answers of 400 or more (as "STATUS PATH", same-origin paths without the origin),
 * so that a test can require none but those it expects. Chromium's own console line
 * for a failed load ("Failed to load resource") is left out: the answer is listed.
 */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) errors.push(`console: ${msg.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() < 400) return;
    const url = new URL(r.url());
    const here = new URL(page.url());
    errors.push(`${r.status()} ${url.origin === here.origin ? url.pathname : url.href}`);
  });
  return errors;
}

/**
 * The runtime token the launcher handed a running studio (BACKLOT_TOKEN in its start
 * command's environment), read from /proc: the credential a studio's server holds,
 * which a page must never be able to use for another studio.
 */
export function runtimeToken(studioId: string, serviceDataDir: string): string {
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let env: Map<string, string>;
    try {
      env = new Map(
        readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]),
      );
    } catch {
      continue; // gone, or not ours
    }
    if (env.get('BACKLOT_STUDIO_ID') === studioId && (env.get('BACKLOT_DATA_DIR') ?? '').startsWith(serviceDataDir) && env.get('BACKLOT_TOKEN')) {
      return env.get('BACKLOT_TOKEN')!;
    }
  }
  throw new Error(`No running process of the studio ${studioId} under ${serviceDataDir}`);
}

/**
 * Clicks a job row's Cancel on the launcher page and returns how many ms passed,
 * in the page's own clock, before the row showed "Cancelling…". A
 * MutationObserver records the first moment, so a cancel that is over in a few
 * ms (the row turning `cancelled` at once) still shows whether the label came
 * first, and by when.
 */
export async function cancelJobFromRow(page: Page, jobId: string): Promise<number> {
  await page.evaluate((id) => {
    const w = window as unknown as { __cancelling?: { clicked: number; seen: number | null } };
    const state = { clicked: 0, seen: null as number | null };
    w.__cancelling = state;
    const look = () => {
      if (state.seen !== null || state.clicked === 0) return;
      const button = document.querySelector(`li.job[data-job="${CSS.escape(id)}"] button[data-focus="cancel"]`);
      if (button?.textContent?.includes('Cancelling…')) state.seen = performance.now();
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
    const button = document.querySelector<HTMLButtonElement>(`li.job[data-job="${CSS.escape(id)}"] button[data-focus="cancel"]`);
    if (!button) throw new Error(`no Cancel button on job ${id}`);
    state.clicked = performance.now();
    button.click();
    look();
  }, jobId);
  const handle = await page.waitForFunction(
    () => {
      const s = (window as unknown as { __cancelling?: { clicked: number; seen: number | null } }).__cancelling;
      return s && s.seen !== null ? s.seen - s.clicked : false;
    },
    undefined,
    { timeout: 5000 },
  );
  return (await handle.jsonValue()) as number;
}

/** What a fetch made inside a page gave it: an answer it could read, or the error it threw. */
export type PageFetch = { status: number; type: string; text: string; error?: undefined } | { error: string; message: string };

/** `fetch(url, init)` run by the page itself (its origin, its cookies, its policy). */
export function pageFetch(page: Page, url: string, init: RequestInit = {}): Promise<PageFetch> {
  return page.evaluate(
    async ([u, i]) => {
      try {
        const r = await fetch(u, i);
        return { status: r.status, type: r.type, text: await r.text() };
      } catch (err) {
        return { error: (err as Error).name, message: (err as Error).message };
      }
    },
    [url, init] as const,
  );
}

/** Where the launcher page keeps its credential: the service origin's localStorage (renderer/lib/credential.ts). */
export const CREDENTIAL_KEY = 'backlot.launcher';

/**
 * Opens a one-time login URL in `page` as a person does and waits until the
 * page's script has spent the code, kept the credential and shows `/`.
 * Returns the credential it keeps.
 */
export async function signIn(page: Page, loginUrl: string): Promise<string> {
  const res = await page.goto(loginUrl.trim());
  if (res?.status() !== 200) throw new Error(`the login URL answered ${res?.status()}`);
  const kept = await page.waitForFunction(
    (key) => location.pathname === '/' && location.search === '' && localStorage.getItem(key),
    CREDENTIAL_KEY,
    { timeout: 15_000 },
  );
  return (await kept.jsonValue()) as string;
}

/** The credential a context keeps for an origin (`http://127.0.0.1:PORT`), read as the page would, or null. */
export async function storedCredential(context: BrowserContext, origin: string): Promise<string | null> {
  const state = await context.storageState();
  return state.origins.find((o) => o.origin === origin)?.localStorage.find((e) => e.name === CREDENTIAL_KEY)?.value ?? null;
}
