import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startShell, type ShellState } from '../main/shell';
import { DataDirLockedError } from '../service/app';
import { upload } from './helpers/assets';
import { StandIn, type StandInWindow } from './helpers/electron-standin';
import { client, send } from './helpers/http';
import { LauncherClient, SKETCHPAD, sleep } from './helpers/launcher';
import { runCli, startService, tempDir } from './helpers/service';
import { openSse } from './helpers/sse';
import { randomBytes } from 'node:crypto';

/**
 * The desktop shell (main/shell.ts) run against a stand-in of
 * the Electron API (no Electron binary can be had here), hosting the real
 * service on a temp data dir: the lock, the windows and what they load, the
 * lock-down of navigation, pop-ups, webviews and permissions, the folder
 * picker's bridge, the editor window shown by `:open`, and quit stopping the
 * studios first.
 */

const quietLog = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** Processes whose working directory is under `folder` (Linux /proc). */
function processesUnder(folder: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`).startsWith(folder)) out.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a second instance quits at once and starts nothing', async () => {
  const electron = new StandIn();
  electron.app.lock = false;
  const dir = tempDir();
  try {
    const { ready } = startShell(electron.api(), ['--data-dir', dir, '--port', '0'], quietLog);
    await assert.rejects(ready, /already running/);
    assert.equal(electron.app.quitCalls, 1);
    assert.equal(electron.windows.length, 0);
    assert.equal(existsSync(join(dir, 'backlot.db')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data dir another server runs on: an error box naming its address and pid, exit 1, no window; the running one keeps its server file', async () => {
  const running = await startService();
  const electron = new StandIn();
  try {
    const { ready } = startShell(electron.api(), ['--data-dir', running.dataDir, '--port', '0'], quietLog);
    await assert.rejects(ready, (err: unknown) => err instanceof DataDirLockedError);
    assert.equal(electron.app.exitCode, 1);
    assert.equal(electron.errorBoxes.length, 1);
    assert.equal(electron.errorBoxes[0].title, 'Backlot is already running on this data dir');
    assert.ok(electron.errorBoxes[0].content.includes(`${running.origin} (pid ${running.child.pid})`), electron.errorBoxes[0].content);
    assert.equal(electron.windows.length, 0);
    assert.equal(runCli(['login-url', '--data-dir', running.dataDir]).code, 0, 'the running server keeps its server file');
  } finally {
    await running.stop();
  }
});

test('an explicit --port in use is an error box and exit 1', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  const electron = new StandIn();
  const dir = tempDir();
  try {
    const { ready } = startShell(electron.api(), ['--data-dir', dir, '--port', String(port)], quietLog);
    await assert.rejects(ready, /already in use/);
    assert.equal(electron.app.exitCode, 1);
    assert.equal(electron.errorBoxes.length, 1);
    assert.match(electron.errorBoxes[0].content, new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.equal(electron.windows.length, 0);
  } finally {
    blocker.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in its own process: an uncaught error or rejection is logged to DIR/logs/backlot.log and the shell keeps serving', async () => {
  const dir = tempDir();
  const child = spawn(process.execPath, [join(__dirname, 'helpers', 'desktop-child.js'), '--data-dir', dir, '--port', '0'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    for (let i = 0; i < 500 && !/READY /.test(stdout) && child.exitCode === null; i++) await sleep(20);
    const url = /READY (\S+)/.exec(stdout)?.[1];
    assert.ok(url, `ready\n${stdout}\n${stderr}`);
    child.stdin.write('throw\nreject\n');
    for (let i = 0; i < 250 && !/a rejection nobody awaited/.test(stderr); i++) await sleep(20);
    assert.equal(child.exitCode, null, 'still running');
    const res = await fetch(`${url}/api/v1/openapi.json`);
    assert.equal(res.status, 200, 'still serving');
    child.stdin.write('quit\n');
    assert.equal(await exited, 0);
    const log = readFileSync(join(dir, 'logs', 'backlot.log'), 'utf8');
    const stamp = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z ';
    assert.match(log, new RegExp(`^${stamp}Backlot listening on ${url}$`, 'm'), log);
    assert.match(log, new RegExp(`^${stamp}Uncaught exception; Backlot keeps running: Error: boom from a request callback$`, 'm'));
    assert.match(log, /^\S+ +at Immediate\.<anonymous> .*desktop-child\.js/m, 'with its stack');
    assert.match(log, new RegExp(`^${stamp}Unhandled rejection; Backlot keeps running: Error: a rejection nobody awaited$`, 'm'));
    // What the shell prints on stderr is there too.
    assert.match(log, new RegExp(`^${stamp}API ${url}/api/v1, data dir ${dir}$`, 'm'));
    assert.equal(statSync(join(dir, 'logs', 'backlot.log')).mode & 0o777, 0o600);
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('the running shell', () => {
  let electron: StandIn;
  let state: ShellState;
  let dir: string;
  let launcherWin: StandInWindow;
  let editorWin: StandInWindow;

  const studioUrl = (id: string, path = '/') => `http://${id}.localhost:${state.port}${path}`;

  before(async () => {
    electron = new StandIn();
    dir = tempDir();
    state = await startShell(electron.api(), ['--data-dir', dir, '--port', '0'], quietLog).ready;
    launcherWin = electron.own(state.launcher());
    // The launcher signs in, then the editor window is made and loads its page.
    for (let i = 0; i < 200 && !(state.editor() && electron.own(state.editor()).loads.length); i++) await sleep(20);
    editorWin = electron.own(state.editor());
  });
  after(async () => {
    if (!electron.app.ended) electron.app.quit();
    for (let i = 0; i < 250 && !electron.app.ended; i++) await sleep(20);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the launcher window opens through a one-time login URL; its page keeps the credential in the default session, no cookie', async () => {
    assert.equal(launcherWin.loads.length, 1);
    assert.match(launcherWin.loads[0], new RegExp(`^http://127\\.0\\.0\\.1:${state.port}/login\\?code=[A-Za-z0-9_-]{43}$`));
    assert.equal(launcherWin.webContents.getURL(), launcherWin.loads[0], 'no redirect: the page spends the code itself');
    assert.equal(launcherWin.webContents.page?.status, 200);
    assert.match(launcherWin.webContents.page!.body, /<script src="\/ui\/launcher\.js" defer><\/script>/);
    assert.equal(electron.session.defaultSession.cookies.size, 0, 'no cookie at all');
    assert.equal(launcherWin.visible, true, 'shown once ready');
    // What the page's script does (script does not run in the stand-in): it posts the code and keeps the credential.
    const code = new URL(launcherWin.loads[0]).searchParams.get('code');
    const spent = await send(state.port, { method: 'POST', path: '/login', body: { code }, headers: { Origin: state.url, 'Sec-Fetch-Site': 'same-origin' } });
    assert.equal(spent.status, 200, spent.text);
    assert.match(spent.json.credential, /^bl_launcher_/);
    assert.equal(spent.headers['set-cookie'], undefined);
    electron.session.defaultSession.localStorage(state.url).set('backlot.launcher', spent.json.credential);
    const studios = await send(state.port, { path: '/api/v1/launcher/studios', token: spent.json.credential });
    assert.equal(studios.status, 200, studios.text);
    // The code was spent: posting it again is refused.
    const again = await send(state.port, { method: 'POST', path: '/login', body: { code }, headers: { Origin: state.url } });
    assert.equal(again.status, 401);
  });

  test('every window is locked: isolation, sandbox, no Node, web security, no webview tag; only the launcher has the preload', () => {
    for (const win of [launcherWin, editorWin]) {
      const p = win.preferences;
      assert.equal(p.contextIsolation, true);
      assert.equal(p.sandbox, true);
      assert.equal(p.nodeIntegration, false);
      assert.equal(p.webSecurity, true);
      assert.equal(p.webviewTag, false);
    }
    assert.match(launcherWin.preferences.preload ?? '', /preload\.js$/);
    assert.equal(editorWin.preferences.preload, undefined);
  });

  test('the editor page is loaded in a hidden window with the launcher session', () => {
    assert.ok(editorWin, 'an editor window exists');
    assert.equal(editorWin.visible, false);
    assert.deepEqual(editorWin.loads, [`${state.url}/editor/`]);
    assert.equal(editorWin.webContents.session, electron.session.defaultSession);
  });

  test('closing the editor window hides it (its page stays connected)', () => {
    editorWin.show();
    assert.equal(editorWin.close(), false);
    assert.equal(editorWin.visible, false);
    assert.equal(editorWin.isDestroyed(), false);
  });

  test('navigation off the service origin is refused; an external link clicked goes to the browser', async () => {
    launcherWin.webContents.input('mouseDown');
    assert.equal(await launcherWin.webContents.navigate('https://example.com/help'), false);
    assert.deepEqual(electron.external, ['https://example.com/help']);
    assert.equal(await launcherWin.webContents.navigate('file:///etc/passwd'), false);
    assert.deepEqual(electron.external, ['https://example.com/help'], 'nothing else was handed out');
    assert.equal(state.studioWindows().size, 0);
    // A plain link to a studio does not take the launcher's place: it opens the studio's window.
    assert.equal(await launcherWin.webContents.navigate(studioUrl('sketchpad')), false);
    assert.deepEqual([...state.studioWindows().keys()], ['sketchpad']);
    assert.equal(await launcherWin.webContents.navigate(`${state.url}/`), true);
    assert.equal(launcherWin.webContents.attachWebview(), true, 'a <webview> is refused');
  });

  test("the editor's link to a gallery item shows it in the launcher window; the editor window stays on the editor", async () => {
    const item = `${state.url}/#gallery/01ARZ3NDEKTSV4RRFFQ69G5FAV`;
    const before = launcherWin.loads.length;
    assert.equal(await editorWin.webContents.navigate(item), false, 'the editor window does not leave /editor/');
    assert.equal(new URL(editorWin.webContents.getURL()).pathname, '/editor/');
    assert.equal(launcherWin.loads.length, before + 1);
    assert.equal(launcherWin.loads.at(-1), item);
    assert.equal(await editorWin.webContents.navigate(`${state.url}/api/v1/launcher/studios`), false, 'nothing else of the service');
    assert.equal(launcherWin.loads.length, before + 1);
    assert.equal(await launcherWin.webContents.navigate(`${state.url}/`), true);
  });

  test('a studio opens in its own window and session partition, never as a pop-up of the launcher', async () => {
    const answer = launcherWin.webContents.popup(studioUrl('sketchpad'));
    assert.deepEqual(answer, { action: 'deny' });
    const win = electron.own(state.studioWindows().get('sketchpad'));
    assert.ok(win, 'a sketchpad window');
    assert.equal(win.preferences.partition, 'persist:studio-sketchpad');
    assert.equal(win.preferences.preload, undefined);
    assert.equal(win.preferences.sandbox, true);
    assert.deepEqual(win.loads, [studioUrl('sketchpad')]);
    assert.equal(win.webContents.session, electron.session.fromPartition('persist:studio-sketchpad'));
    assert.notEqual(win.webContents.session, electron.session.defaultSession);
    assert.equal(win.webContents.session.cookies.size, 0, 'no cookie in a studio session');
    assert.deepEqual(win.webContents.session.storedValues(), [], 'the launcher credential is not in a studio session');
    // Open again: the same window is focused, no second one.
    const windows = electron.windows.length;
    launcherWin.webContents.popup(studioUrl('sketchpad'));
    assert.equal(electron.windows.length, windows);
    assert.ok(win.focused >= 1);
    // Another studio: its own partition.
    launcherWin.webContents.popup(studioUrl('clipmaker'));
    assert.equal((electron.own(state.studioWindows().get('clipmaker'))).webContents.session, electron.session.fromPartition('persist:studio-clipmaker'));
  });

  test('a studio window stays on its origin: no other studio, no launcher, no editor, no login', async () => {
    const win = electron.own(state.studioWindows().get('sketchpad'));
    for (const url of [studioUrl('clipmaker'), `${state.url}/`, `${state.url}/api/v1/launcher/studios`, `http://localhost:${state.port}/login?code=x`]) {
      assert.equal(await win.webContents.navigate(url), false, url);
    }
    const before = electron.windows.length;
    for (const url of [studioUrl('clipmaker'), `${state.url}/`, `${state.url}/editor/`]) {
      assert.deepEqual(win.webContents.popup(url), { action: 'deny' });
    }
    assert.equal(electron.windows.length, before, 'no window was made');
    assert.equal(editorWin.visible, false, 'a studio cannot show the editor window');
    assert.equal(await win.webContents.navigate(studioUrl('sketchpad', '/other')), true);
  });

  test('a studio hands an address to the browser only just after a click or key press in its window, at most once a second', async () => {
    const win = electron.own(state.studioWindows().get('sketchpad'));
    const contents = win.webContents;
    const before = electron.external.length;
    // No input yet: script alone opens nothing, by window.open or by navigating.
    assert.deepEqual(contents.popup('https://example.com/a'), { action: 'deny' });
    assert.equal(await contents.navigate('https://example.com/b'), false);
    // Moving the mouse or scrolling is no gesture.
    contents.input('mouseMove');
    contents.input('mouseWheel');
    contents.popup('https://example.com/c');
    assert.equal(electron.external.length, before, 'nothing opened without a gesture');
    // A click: one opening.
    contents.input('mouseDown');
    contents.popup('https://example.com/d', 'foreground-tab');
    assert.deepEqual(electron.external.slice(before), ['https://example.com/d']);
    // Another click at once: the second opening within a second is refused.
    contents.input('mouseUp');
    contents.popup('https://example.com/e');
    assert.deepEqual(electron.external.slice(before), ['https://example.com/d']);
    // A second later, a key press: allowed again.
    await sleep(1050);
    contents.input('keyDown');
    assert.equal(await contents.navigate('https://example.com/f'), false, 'the window itself stays');
    assert.deepEqual(electron.external.slice(before), ['https://example.com/d', 'https://example.com/f']);
  });

  test('loopback addresses other than its own origin never reach the browser, even just after a click', async () => {
    const win = electron.own(state.studioWindows().get('clipmaker'));
    const contents = win.webContents;
    const before = electron.external.length;
    const windows = electron.windows.length;
    contents.input('mouseDown');
    for (const url of [
      `http://127.0.0.1:${state.port + 1}/`,
      'http://localhost:3000/',
      `http://sketchpad.localhost:${state.port + 1}/`,
      'http://[::1]:8080/',
      'http://0.0.0.0:8080/',
      'http://127.0.0.2/',
      `https://127.0.0.1:${state.port}/`,
    ]) {
      assert.deepEqual(contents.popup(url), { action: 'deny' }, url);
      assert.equal(await contents.navigate(url), false, url);
    }
    assert.equal(electron.external.length, before, 'none went to the browser');
    assert.equal(electron.windows.length, windows, 'none opened a window');
    // The same click still opens a real external address: the refusals did not count as openings.
    contents.popup('https://example.org/');
    assert.deepEqual(electron.external.slice(before), ['https://example.org/']);
  });

  test("a frame inside a page redirected off the page's origin is stopped and opens nothing", () => {
    const contents = electron.own(state.studioWindows().get('sketchpad')).webContents;
    const before = electron.external.length;
    contents.input('mouseDown');
    assert.equal(contents.subframeRedirect('https://example.net/'), true);
    assert.equal(electron.external.length, before);
  });

  test('every permission is refused, in the default session and in each studio partition', async () => {
    for (const s of [electron.session.defaultSession, electron.session.fromPartition('persist:studio-sketchpad'), electron.session.fromPartition('persist:studio-clipmaker')]) {
      assert.ok(s.requestHandler && s.checkHandler, `handlers set on ${s.partition || 'default'}`);
      for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read']) {
        assert.equal(await s.ask(permission), false);
        assert.equal(s.check(permission), false);
      }
    }
  });

  test('the folder picker answers the launcher page only', async () => {
    electron.folderAnswer = { canceled: false, filePaths: ['/home/me/studios/sketchpad'] };
    assert.equal(await electron.invoke('backlot:pick-folder', `${state.url}/`), '/home/me/studios/sketchpad');
    assert.equal(electron.folderDialogs.at(-1)?.window, launcherWin);
    assert.deepEqual(electron.folderDialogs.at(-1)?.properties, ['openDirectory']);
    electron.folderAnswer = { canceled: true, filePaths: [] };
    assert.equal(await electron.invoke('backlot:pick-folder', `${state.url}/`), null);
    const asked = electron.folderDialogs.length;
    for (const frame of [studioUrl('sketchpad'), `${state.url}/editor/`, 'https://example.com/', null]) {
      await assert.rejects(electron.invoke('backlot:pick-folder', frame), /Only the launcher page/);
    }
    assert.equal(electron.folderDialogs.length, asked, 'no dialog for anyone else');
  });

  test(':open from a studio shows the editor window (the page connected with the launcher session)', async () => {
    // The hidden window's page connects to /editor/events with the credential its origin's storage holds
    // in the default session (the launcher page put it there); script does not run in the stand-in, so
    // this test connects as that page, with that credential.
    assert.equal(editorWin.webContents.session, electron.session.defaultSession, 'the editor shares the launcher page\'s session');
    const stored = electron.session.defaultSession.localStorage(state.url).get('backlot.launcher');
    assert.ok(stored, 'the launcher page stored its credential');
    const page = await openSse(state.port, '!/editor/events', stored, { 'Sec-Fetch-Site': 'same-origin' });
    try {
      assert.equal(page.status, 200, page.text());
      await page.waitFor((m) => m.event === 'hello');
      const token = runCli(['studio', 'add', 'alpha', '--data-dir', dir]);
      assert.equal(token.code, 0, token.stderr);
      const t = runCli(['token', 'create', '--studio', 'alpha', '--caps', 'timeline,assets', '--data-dir', dir]);
      const alpha = client(state.port, t.stdout.trim());
      const asset = await upload(state.port, t.stdout.trim(), randomBytes(64), 'kind=video&filename=a.mp4&duration_s=2');
      const seq = await alpha.post('/timeline', { name: 'Night', clips: [{ asset_id: asset.json.id }] });
      assert.equal(seq.status, 201, seq.text);
      assert.equal(editorWin.visible, false);
      const r = await alpha.post(`/timeline/${seq.json.id}:open`, undefined);
      assert.equal(r.status, 200, r.text);
      assert.equal(editorWin.visible, true, 'shown');
      assert.ok(editorWin.focused >= 1);
      await page.waitFor((m) => m.event === 'open');
    } finally {
      page.close();
    }
  });

  test('a second start or activate brings the launcher forward', () => {
    const focused = launcherWin.focused;
    electron.app.emit('second-instance');
    assert.ok(launcherWin.focused > focused);
  });

  test('quit stops every studio first, then closes the service and the windows', async () => {
    const cred = runCli(['launcher-token', '--data-dir', dir]).stdout.trim();
    const launcher = new LauncherClient(state.port, cred);
    await launcher.installOk(SKETCHPAD);
    await launcher.startOk('sketchpad');
    const pids = processesUnder(join(dir, 'studios', 'sketchpad'));
    assert.ok(pids.length > 0, 'the studio runs');

    electron.app.quit();
    assert.equal(electron.app.ended, false, 'quit waits for the service');
    for (let i = 0; i < 500 && !electron.app.ended; i++) await sleep(20);
    assert.equal(electron.app.ended, true);
    assert.ok(electron.app.quitCalls >= 2, 'quit again once the service closed');
    assert.deepEqual(pids.filter(isAlive), [], 'the studio processes are gone');
    assert.equal(electron.windows.length, 0, 'every window closed, the editor too');
    assert.equal(existsSync(join(dir, 'server.json')), false, 'the server file is removed');
    const refused = await send(state.port, { method: 'GET', path: '/' }).catch((err: Error) => err);
    assert.ok(refused instanceof Error, 'nothing listens any more');
  });
});
