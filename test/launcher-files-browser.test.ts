import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { makePng, upload } from './helpers/assets';
import { launchChromium, newContext, saveScreenshot, signIn } from './helpers/browser';
import { send } from './helpers/http';
import { startService, type TestService } from './helpers/service';

/**
 * Stored bytes are untrusted (docs/security.md): in the machine's Chromium,
 * signed in to the launcher, an uploaded SVG, HTML or XHTML file with script
 * opened on the service's own origin (through the short-lived media URL the
 * launcher page opens it with, docs/api.md §Media URLs) is a download and runs nothing; HTML stored as text/plain shows as text (nosniff);
 * an SVG still shows as a picture through <img>, and a PNG opened as a page still
 * shows (the sandbox does not break pictures). "Ran" is watched for as any
 * request to a `/ran-` path, which every script here makes first.
 */

let svc: TestService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let token: string;
/** The credential the signed-in page keeps. */
let cred: string;
/** Every request the browser made to a `/ran-` path: a script that ran. */
const ran: string[] = [];

const beacon = (name: string) =>
  `fetch('/ran-${name}-fetch');new Image().src='/ran-${name}-img';document.title='RAN';try{parent.location='/ran-${name}-nav'}catch(e){}`;

const FILES = {
  svg: {
    query: 'kind=image&filename=evil.svg',
    type: 'image/svg+xml',
    body: `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30" onload="${beacon('svg-onload')}"><script>${beacon('svg')}</script><rect width="40" height="30" fill="red"/></svg>`,
  },
  html: { query: 'kind=other&filename=evil.html', type: 'text/html', body: `<!doctype html><title>x</title><script>${beacon('html')}</script><img src=x onerror="${beacon('html-onerror')}">` },
  xhtml: {
    query: 'kind=other&filename=evil.xhtml',
    type: 'application/xhtml+xml',
    body: `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>${beacon('xhtml')}</script></body></html>`,
  },
  xml: {
    query: 'kind=other&filename=evil.xml',
    type: 'text/xml',
    body: `<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">${beacon('xml')}</x:script>`,
  },
  untyped: { query: 'kind=other&filename=evil', type: undefined, body: `<html><script>${beacon('untyped')}</script></html>` },
  text: { query: 'kind=other&filename=evil.txt', type: 'text/plain', body: `<html><script>${beacon('text')}</script></html>` },
} as const;
const ids: Record<string, string> = {};

before(async () => {
  svc = await startService();
  token = svc.studio('alpha', ['assets', 'gallery']);
  for (const [name, f] of Object.entries(FILES)) {
    const res = await upload(svc.port, token, Buffer.from(f.body), f.query, f.type);
    assert.equal(res.status, 201, `${name}: ${res.body.toString()}`);
    ids[name] = res.json.id;
  }
  const png = await upload(svc.port, token, await makePng(40, 30, 7), 'kind=image&filename=ok.png', 'image/png');
  assert.equal(png.status, 201);
  ids.png = png.json.id;

  browser = await launchChromium();
  context = await newContext(browser);
  context.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/ran-')) ran.push(r.url());
  });
  page = await context.newPage();
  // Signed in: the page spends the one-time code and keeps the credential (no cookie), on the launcher page.
  cred = await signIn(page, svc.cli(['login-url']).stdout);
  assert.deepEqual(await context.cookies(), [], 'no cookie');
});

after(async () => {
  await browser?.close();
  await svc?.stop();
});

/** A media URL for a stored file, minted as the launcher page mints them (its credential). */
async function url(name: string): Promise<string> {
  const r = await send(svc.port, { method: 'POST', path: '/api/v1/launcher/media-urls', token: cred, body: { assets: [{ id: ids[name], variant: 'file' }] } });
  assert.equal(r.status, 200, r.text);
  return `http://127.0.0.1:${svc.port}${r.json.items[0].url}`;
}

test('an SVG, HTML, XHTML, XML or untyped file with script opened on the service origin is a download and runs nothing', async () => {
  for (const name of ['svg', 'html', 'xhtml', 'xml', 'untyped']) {
    const download = page.waitForEvent('download', { timeout: 15_000 }).catch(() => null);
    await page.goto(await url(name)).catch((err: Error) => assert.match(err.message, /Download is starting|net::ERR_ABORTED/, name));
    await page.waitForTimeout(300);
    assert.deepEqual(ran, [], `${name}: its script ran`);
    const file = await download;
    assert.ok(file, `${name}: not a download`);
    assert.equal(file.suggestedFilename(), new URLSearchParams(FILES[name as keyof typeof FILES].query).get('filename'), name);
    await file.cancel();
  }
  await page.waitForTimeout(500);
  assert.deepEqual(ran, []);
  assert.notEqual(await page.title(), 'RAN');
});

test('HTML stored as text/plain shows as text (nosniff): the script is not run', async () => {
  const res = await page.goto(await url('text'));
  assert.equal(res?.status(), 200);
  assert.equal(res?.headers()['x-content-type-options'], 'nosniff');
  assert.match(res?.headers()['content-security-policy'] ?? '', /\bsandbox\b/);
  assert.match(await page.evaluate(() => document.body.innerText), /<script>/);
  await page.waitForTimeout(500);
  assert.deepEqual(ran, []);
  await saveScreenshot(page, 'launcher-files-text', 'light');
});

test('a picture still shows: a PNG opened as a page, and the SVG through <img> (which never runs its script)', async () => {
  const res = await page.goto(await url('png'));
  assert.equal(res?.status(), 200);
  assert.match(res?.headers()['content-security-policy'] ?? '', /\bsandbox\b/);
  const shown = await page.evaluate(() => {
    const img = document.querySelector('img');
    return img ? img.naturalWidth : 0;
  });
  assert.equal(shown, 40);

  await page.goto(`http://127.0.0.1:${svc.port}/`);
  const width = await page.evaluate(async (src) => {
    const img = new Image();
    img.src = src;
    document.body.append(img);
    await img.decode();
    return img.naturalWidth;
  }, await url('svg'));
  assert.equal(width, 40);
  await page.waitForTimeout(500);
  assert.deepEqual(ran, []);
  await saveScreenshot(page, 'launcher-files-svg-img', 'light');
});
