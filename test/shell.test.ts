import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
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
 * The desktop shell (main/shell.ts, issue 18 item 4) run against a stand-in of
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
    launcherWin = state.launcher() as StandInWindow;
    // The launcher signs in, then the editor window is made and loads its page.
    for (let i = 0; i < 200 && !(state.editor() as StandInWindow | null)?.loads.length; i++) await sleep(20);
    editorWin = state.editor() as StandInWindow;
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
      const p = win.options.webPreferences;
      assert.equal(p.contextIsolation, true);
      assert.equal(p.sandbox, true);
      assert.equal(p.nodeIntegration, false);
      assert.equal(p.webSecurity, true);
      assert.equal(p.webviewTag, false);
    }
    assert.match(launcherWin.options.webPreferences.preload ?? '', /preload\.js$/);
    assert.equal(editorWin.options.webPreferences.preload, undefined);
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

  test('navigation off the service origin is refused; an external link goes to the browser', async () => {
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
    const win = state.studioWindows().get('sketchpad') as StandInWindow;
    assert.ok(win, 'a sketchpad window');
    assert.equal(win.options.webPreferences.partition, 'persist:studio-sketchpad');
    assert.equal(win.options.webPreferences.preload, undefined);
    assert.equal(win.options.webPreferences.sandbox, true);
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
    assert.equal((state.studioWindows().get('clipmaker') as StandInWindow).webContents.session, electron.session.fromPartition('persist:studio-clipmaker'));
  });

  test('a studio window stays on its origin: no other studio, no launcher, no editor, no login', async () => {
    const win = state.studioWindows().get('sketchpad') as StandInWindow;
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

  test('every permission is refused, in the default session and in each studio partition', async () => {
    for (const s of [electron.session.defaultSession, electron.session.fromPartition('persist:studio-sketchpad'), electron.session.fromPartition('persist:studio-clipmaker')]) {
      assert.ok(s.requestHandler && s.checkHandler, `handlers set on ${s.partition || 'default'}`);
      for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read']) {
        const granted = await new Promise<boolean>((resolve) => s.requestHandler!(launcherWin.webContents, permission, resolve));
        assert.equal(granted, false);
        assert.equal(s.checkHandler!(launcherWin.webContents, permission), false);
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
