import { join } from 'node:path';
import { createService, DataDirLockedError, type Service } from '../service/app';
import { defaultDataDir } from '../service/data-dir';
import { PICK_FOLDER_CHANNEL } from './bridge';
import type { BrowserWindow, BrowserWindowOptions, ElectronMain, Session, WebContents } from './electron-api';
import {
  isGesture,
  isLauncherFrame,
  mayNavigate,
  mayOpenExternal,
  parseShellArgs,
  popupTarget,
  studioPartition,
  type Redirect,
  type WindowKind,
} from './rules';

/**
 * The desktop shell: the main process hosts the service (the same
 * createService() as `bin/backlot serve`) and shows its pages. Everything a
 * person sees is a page of the service (renderer/), so it behaves the same in
 * any browser; this file only decides which window shows what.
 *
 * - One instance per user (a second start focuses the first).
 * - The launcher window signs in through a one-time login URL, as a browser
 *   does: the page spends the code and keeps the credential in the service
 *   origin's localStorage of the default session (never a cookie, never in a
 *   URL that stays in history; docs/security.md "The launcher credential").
 * - The editor page stays connected in a hidden window of the same session
 *   (the same origin's localStorage: it reads the same credential, and
 *   reloads when the launcher page stores one after it loaded) and
 *   is shown when a studio's `:open` reaches it, so `:open` never answers 501
 *   in the desktop app while the shell runs.
 * - A studio's window loads its own origin `http://<id>.localhost:PORT/` in its
 *   own session partition; no window keeps an opener handle on another.
 * - Every window: context isolation, sandbox, no Node, web security on, no
 *   <webview>, no permissions, no navigation off its own origin.
 * - An address goes to the browser only just after a click or key press in the
 *   window, never a loopback one, and at most once a second, five a minute
 *   (rules.ts mayOpenExternal).
 * - Quit stops the studios and cancels running exports (service.close()) first.
 */

const DEFAULT_PORT = 7380;

export interface ShellState {
  service: Service;
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  launcher(): BrowserWindow | null;
  editor(): BrowserWindow | null;
  studioWindows(): Map<string, BrowserWindow>;
}

export interface ShellHandle {
  /** Resolves once the service listens and the launcher window is loading; rejects when start-up failed. */
  ready: Promise<ShellState>;
}

const lockedPreferences = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  webSecurity: true,
  webviewTag: false,
} as const;

export function startShell(electron: ElectronMain, args: string[], log: Pick<Console, 'log' | 'error' | 'warn'> = console): ShellHandle {
  const { app, BrowserWindow, ipcMain, session, dialog, shell } = electron;
  let resolveReady!: (s: ShellState) => void;
  let rejectReady!: (err: unknown) => void;
  const ready = new Promise<ShellState>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  ready.catch(() => undefined); // reported through the dialog below

  // One app per user: a second one would fight over the port and the database.
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    rejectReady(new Error('Backlot is already running: the first instance was asked to show itself.'));
    return { ready };
  }

  let service: Service | null = null;
  let port = 0;
  let baseUrl = '';
  let launcherWin: BrowserWindow | null = null;
  let editorWin: BrowserWindow | null = null;
  const studioWins = new Map<string, BrowserWindow>();
  /** What each page is: looked up at event time (a contents not listed may do nothing). */
  const kinds = new WeakMap<WebContents, WindowKind>();
  const lockedSessions = new WeakSet<Session>();
  /** Per page: when the person last clicked or pressed a key in it, and its recent browser openings. */
  const lastGesture = new WeakMap<WebContents, number>();
  const openedExternal = new WeakMap<WebContents, number[]>();
  let quitting = false;
  let closed = false;

  const lockSession = (s: Session) => {
    if (lockedSessions.has(s)) return;
    lockedSessions.add(s);
    s.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    s.setPermissionCheckHandler(() => false);
  };

  const openInBrowser = (from: WebContents, url: string) => {
    const now = Date.now();
    const verdict = mayOpenExternal(lastGesture.get(from) ?? null, openedExternal.get(from) ?? [], now);
    if (!verdict.ok) {
      log.warn(`Not opening ${url} in the browser: ${verdict.reason}.`);
      return;
    }
    openedExternal.set(from, verdict.opened);
    void shell.openExternal(url).catch((err: unknown) => log.error('Opening the browser failed:', err));
  };

  const follow = (from: WebContents, redirect: Redirect) => {
    if (redirect.to === 'browser') openInBrowser(from, redirect.url);
    else if (redirect.to === 'studio') openStudio(redirect.id, redirect.url);
    else if (redirect.to === 'editor') showEditor();
    else if (redirect.to === 'launcher') {
      openLauncher();
      if (launcherWin && !launcherWin.isDestroyed()) void launcherWin.loadURL(redirect.url).catch((err: unknown) => log.error('Loading the launcher failed:', err));
    }
  };

  // Every page, including ones Electron makes on its own: locked before it loads anything.
  app.on('web-contents-created', (_event, contents) => {
    const refuse = (event: { url: string; isMainFrame: boolean; preventDefault(): void }) => {
      const kind = kinds.get(contents);
      if (kind && mayNavigate(kind, event.url, port)) return;
      event.preventDefault();
      // A frame inside the page redirected away: stopped, and it opens nothing.
      if (kind && event.isMainFrame) follow(contents, popupTarget(kind, event.url, port));
    };
    contents.on('will-navigate', refuse);
    contents.on('will-redirect', refuse);
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.on('input-event', (_event, input) => {
      if (isGesture(input)) lastGesture.set(contents, Date.now());
    });
    contents.setWindowOpenHandler(({ url }) => {
      const kind = kinds.get(contents);
      if (kind) follow(contents, popupTarget(kind, url, port));
      return { action: 'deny' };
    });
  });

  const makeWindow = (kind: WindowKind, options: Omit<BrowserWindowOptions, 'webPreferences'>, preferences: { preload?: string; partition?: string }) => {
    const win = new BrowserWindow({
      width: 1100,
      height: 720,
      minWidth: 640,
      minHeight: 420,
      backgroundColor: '#f6f5f2',
      ...options,
      webPreferences: { ...lockedPreferences, ...preferences },
    });
    kinds.set(win.webContents, kind);
    lockSession(win.webContents.session);
    return win;
  };

  const openLauncher = () => {
    if (launcherWin && !launcherWin.isDestroyed()) {
      if (launcherWin.isMinimized()) launcherWin.restore();
      launcherWin.show();
      launcherWin.focus();
      return;
    }
    const win = makeWindow({ kind: 'launcher' }, { title: 'Backlot', show: false }, { preload: join(__dirname, 'preload.js') });
    launcherWin = win;
    win.once('ready-to-show', () => win.show());
    win.webContents.on('did-navigate', (_event, url) => {
      // The launcher page (on /login it is signing in): the editor page shares its origin's storage, so its credential.
      if (mayNavigate({ kind: 'launcher' }, url, port) && ['/', '/login'].includes(new URL(url).pathname)) ensureEditor();
    });
    win.on('closed', () => {
      launcherWin = null;
      // The hidden editor window keeps the app alive otherwise; on macOS the app stays in the dock.
      if (process.platform !== 'darwin') app.quit();
    });
    void win.loadURL(service!.loginUrl()).catch((err: unknown) => log.error('Loading the launcher failed:', err));
  };

  const ensureEditor = () => {
    if (editorWin && !editorWin.isDestroyed()) return;
    const win = makeWindow({ kind: 'editor' }, { title: 'Backlot editor', show: false }, {});
    editorWin = win;
    // Closing it hides it: the page stays connected so the next :open still reaches it.
    win.on('close', (event) => {
      if (quitting) return;
      event.preventDefault();
      win.hide();
    });
    win.on('closed', () => {
      editorWin = null;
    });
    void win.loadURL(`${baseUrl}/editor/`).catch((err: unknown) => log.error('Loading the editor failed:', err));
  };

  const showEditor = () => {
    ensureEditor();
    if (!editorWin) return;
    if (editorWin.isMinimized()) editorWin.restore();
    editorWin.show();
    editorWin.focus();
  };

  const openStudio = (id: string, url: string) => {
    const existing = studioWins.get(id);
    if (existing && !existing.isDestroyed()) {
      if (existing.webContents.getURL() !== url) void existing.loadURL(url);
      if (existing.isMinimized()) existing.restore();
      existing.focus();
      return;
    }
    const partition = studioPartition(id);
    lockSession(session.fromPartition(partition));
    const win = makeWindow({ kind: 'studio', id }, { title: id, show: true }, { partition });
    studioWins.set(id, win);
    win.on('closed', () => {
      if (studioWins.get(id) === win) studioWins.delete(id);
    });
    void win.loadURL(url).catch((err: unknown) => log.error(`Loading studio ${id} failed:`, err));
  };

  app.on('second-instance', () => {
    if (service) openLauncher();
  });
  app.on('activate', () => {
    if (service) openLauncher();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  // Quit waits for service.close(): studios stopped, exports cancelled (partial files removed), database closed.
  app.on('before-quit', (event) => {
    quitting = true;
    if (closed || !service) return;
    event.preventDefault();
    const s = service;
    service = null;
    s.close()
      .catch((err: unknown) => log.error('Closing the service failed:', err))
      .finally(() => {
        closed = true;
        app.quit();
      });
  });

  ipcMain.handle(PICK_FOLDER_CHANNEL, async (event) => {
    if (!isLauncherFrame(event.senderFrame?.url, port) || !launcherWin) throw new Error('Only the launcher page may ask.');
    const answer = await dialog.showOpenDialog(launcherWin, { title: 'Choose a studio folder', properties: ['openDirectory'] });
    return answer.canceled || answer.filePaths.length === 0 ? null : answer.filePaths[0];
  });

  const boot = async (): Promise<ShellState> => {
    const parsed = parseShellArgs(args);
    const dataDir = parsed.dataDir ?? defaultDataDir();
    const s = createService({ dataDir });
    try {
      let listening: { port: number; url: string };
      try {
        listening = await s.listen(parsed.port ?? DEFAULT_PORT);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        // An explicit --port is the person's choice: in use is an error, as in `serve`.
        if (parsed.port !== null) throw new Error(`Port ${parsed.port} on 127.0.0.1 is already in use. Stop what holds it or pass another --port.`);
        log.warn(`Port ${DEFAULT_PORT} on 127.0.0.1 is in use; listening on a free port instead.`);
        listening = await s.listen(0);
      }
      port = listening.port;
      baseUrl = listening.url;
    } catch (err) {
      await s.close();
      throw err;
    }
    service = s;
    log.log(`Backlot listening on ${baseUrl}`);
    log.error(`API ${baseUrl}/api/v1, data dir ${dataDir}`);
    s.editor.onOpen(() => showEditor());
    openLauncher();
    return {
      service: s,
      url: baseUrl,
      port,
      launcher: () => launcherWin,
      editor: () => editorWin,
      studioWindows: () => studioWins,
    };
  };

  app
    .whenReady()
    .then(boot)
    .then(resolveReady, (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      log.error(`Backlot could not start: ${message}`);
      // Another server on the data dir (the CLI's `serve`, say): the message names its address and pid.
      dialog.showErrorBox(err instanceof DataDirLockedError ? 'Backlot is already running on this data dir' : 'Backlot could not start', message);
      rejectReady(err);
      app.exit(1);
    });

  return { ready };
}
