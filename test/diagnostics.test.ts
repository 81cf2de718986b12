import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { SERVICE_VERSION } from '../service/app';
import { LOG_LINES, maskSecrets } from '../service/diagnostics';
import { resolveTool } from '../service/media';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors, type Scheme } from './helpers/browser';
import { send } from './helpers/http';
import { startLauncher, type LauncherService } from './helpers/launcher';

/**
 * Diagnostics (docs/api.md "Diagnostics"; service/diagnostics): what the
 * launcher's "Copy diagnostics" copies. The route answers the launcher
 * credential only, with versions, platform, paths, the media tools as the
 * media module resolves them and the log's last lines; it never carries a
 * token or a credential, even when the log does. The button copies it as text
 * and says so; where the page may not write the clipboard it shows the text
 * selected. Screenshots in light and dark, 1280 and 800 px.
 */

const MISSING_FFPROBE = '/nonexistent/backlot-test/ffprobe';

describe('diagnostics', () => {
  let svc: LauncherService;
  let browser: Browser;
  let studioToken: string;
  let loginUrl: string;

  before(async () => {
    svc = await startLauncher({ env: { BACKLOT_FFPROBE: MISSING_FFPROBE } });
    studioToken = svc.svc.studio('alpha', ['kv', 'assets']);
    loginUrl = svc.svc.cli(['login-url']).stdout.trim();
  });
  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  });

  test('GET /launcher/diagnostics: versions, platform, paths and media tools; no log yet', async () => {
    const r = await svc.l.get('/launcher/diagnostics');
    assert.equal(r.status, 200, r.text);
    const d = r.json;
    assert.equal(d.version, SERVICE_VERSION);
    assert.ok(!Number.isNaN(Date.parse(d.generated_at)));
    assert.deepEqual(
      { platform: d.runtime.platform, arch: d.runtime.arch, node: d.runtime.node, electron: d.runtime.electron, pid: d.runtime.pid },
      { platform: platform(), arch: arch(), node: process.versions.node, electron: null, pid: svc.svc.child.pid },
    );
    const dir = svc.svc.dataDir;
    assert.deepEqual(d.paths, {
      data_dir: dir,
      database: join(dir, 'backlot.db'),
      log_dir: join(dir, 'logs'),
    });
    assert.deepEqual(d.media_tools, {
      ffmpeg: resolveTool('ffmpeg'),
      // BACKLOT_FFPROBE names no file: the media module would run none, and says where that came from.
      ffprobe: { path: null, source: 'env' },
    });
    assert.ok(d.media_tools.ffmpeg.path, 'ffmpeg is installed here');
    assert.deepEqual(d.log, { file: join(dir, 'logs', 'backlot.log'), present: false, lines: [] });
  });

  test('the launcher credential only: a studio token or none is 401', async () => {
    for (const token of [studioToken, null]) {
      const r = await send(svc.svc.port, { path: '/api/v1/launcher/diagnostics', token });
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.code, 'unauthenticated');
    }
  });

  test("the log's last lines, and never a token or a credential, even one the log holds", async () => {
    const logs = join(svc.svc.dataDir, 'logs');
    mkdirSync(logs, { recursive: true });
    const credential = svc.l.cred;
    const secretLines = [
      `issued ${studioToken} to alpha`,
      `launcher signed in with ${credential}`,
      `GET ${loginUrl}`,
      `Authorization: Bearer ${studioToken.slice(4)}`,
      `thumb http://127.0.0.1:1/api/v1/launcher/assets/x/thumb?key=s3cr3tvalue&w=64`,
    ];
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ordinary`);
    lines.splice(290, 0, ...secretLines);
    writeFileSync(join(logs, 'backlot.log'), `${lines.join('\n')}\n`);

    const r = await svc.l.get('/launcher/diagnostics');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.log.present, true);
    assert.equal(r.json.log.lines.length, LOG_LINES);
    assert.equal(r.json.log.lines.at(-1), 'line 299 ordinary');
    assert.ok(r.json.log.lines.includes('issued blt_[hidden] to alpha'));
    assert.ok(r.json.log.lines.includes('launcher signed in with bl_launcher_[hidden]'));
    const code = new URL(loginUrl).searchParams.get('code')!;
    for (const secret of [studioToken, studioToken.slice(4), credential, credential.slice('bl_launcher_'.length), code, 's3cr3tvalue']) {
      assert.ok(!r.text.includes(secret), `the answer holds a secret: ${secret.slice(0, 12)}…`);
    }
    assert.doesNotMatch(r.text, /blt_[A-Za-z0-9_-]{8}|bl_launcher_[A-Za-z0-9_-]{8}/);
  });

  test('maskSecrets: each credential shape, and ordinary text untouched', () => {
    const rows: [string, string][] = [
      ['token blt_AbC-123_x ok', 'token blt_[hidden] ok'],
      ['cred bl_launcher_Zz9-_ end', 'cred bl_launcher_[hidden] end'],
      ['Authorization: Bearer abc.def', 'Authorization: Bearer [hidden]'],
      ['authorization: bearer "x1"', 'authorization: bearer "[hidden]"'],
      ['http://127.0.0.1:7380/login?code=Q1w2&x=1', 'http://127.0.0.1:7380/login?code=[hidden]&x=1'],
      ['/thumb?w=64&key=abc#frag', '/thumb?w=64&key=[hidden]#frag'],
      ['/x?token=abc def', '/x?token=[hidden] def'],
      ['GET /api/v1/media/01ARZ.f.t5x.0a1b2c3d4e5f.AbC_-9 206', 'GET /api/v1/media/[hidden] 206'],
      ['Backlot listening on http://127.0.0.1:7380', 'Backlot listening on http://127.0.0.1:7380'],
      ['a qblt_ word and codes=1', 'a qblt_ word and codes=1'],
    ];
    for (const [line, expected] of rows) assert.equal(maskSecrets(line), expected, line);
  });

  async function signedInPage(scheme: Scheme, width: number, clipboard: boolean): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    browser ??= await launchChromium();
    const context = await newContext(browser, scheme, {
      viewport: { width, height: 700 },
      permissions: clipboard ? ['clipboard-read', 'clipboard-write'] : [],
    });
    const page = await context.newPage();
    if (!clipboard) {
      // A window that may not write the clipboard at all (a desktop shell that grants no permission).
      await page.addInitScript(() => {
        Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new DOMException('denied', 'NotAllowedError')) } });
        document.execCommand = () => false;
      });
    }
    const errors = watchPageErrors(page);
    const url = svc.svc.cli(['login-url']);
    assert.equal(url.code, 0, url.stderr);
    await page.goto(url.stdout.trim());
    await page.getByRole('heading', { name: 'Studios' }).waitFor();
    return { page, errors, close: () => context.close() };
  }

  test('Copy diagnostics copies the report as text and says so in words (light and dark, 1280 and 800 px)', async () => {
    for (const width of [1280, 800]) {
      for (const scheme of SCHEMES) {
        const { page, errors, close } = await signedInPage(scheme, width, true);
        try {
          await page.getByRole('button', { name: 'Copy diagnostics' }).click();
          await page.locator('.diagnostics-status', { hasText: 'Diagnostics copied to the clipboard.' }).waitFor();
          const text = await page.evaluate(() => navigator.clipboard.readText());
          assert.match(text, new RegExp(`^Backlot ${SERVICE_VERSION} diagnostics \\(`));
          assert.ok(text.includes(`data_dir: ${svc.svc.dataDir}`));
          assert.ok(text.includes('ffprobe: (none found)'));
          assert.match(text, /^ffmpeg: \/\S+ \((path|ffmpeg-static|bundled)\)$/m);
          assert.ok(text.includes('line 299 ordinary'));
          assert.ok(!text.includes(svc.l.cred) && !text.includes(studioToken), 'no credential in the copy');
          await saveScreenshot(page, `diagnostics-copied-${width}`, scheme);
          assert.deepEqual(errors, []);
        } finally {
          await close();
        }
      }
    }
  });

  test('where the page may not write the clipboard, the report is shown selected for copying by hand', async () => {
    for (const width of [1280, 800]) {
      const { page, errors, close } = await signedInPage('light', width, false);
      try {
        await page.getByRole('button', { name: 'Copy diagnostics' }).click();
        const area = page.getByRole('textbox', { name: 'Diagnostics' });
        await area.waitFor();
        assert.match(await area.inputValue(), /^Backlot .* diagnostics/);
        const selected = await page.evaluate(() => {
          const el = document.activeElement as HTMLTextAreaElement;
          return el.selectionEnd - el.selectionStart === el.value.length && el.value.length > 0;
        });
        assert.ok(selected, 'the whole report is selected');
        await page.locator('.diagnostics-status', { hasText: 'Copy by hand' }).waitFor();
        for (const scheme of SCHEMES) {
          await page.emulateMedia({ colorScheme: scheme });
          await saveScreenshot(page, `diagnostics-manual-${width}`, scheme);
        }
        await page.getByRole('button', { name: 'Close' }).click();
        assert.equal(await area.isVisible(), false);
        assert.deepEqual(errors, []);
      } finally {
        await close();
      }
    }
  });
});
