import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createService, type Service } from '../service/app';
import { defaultDataDir } from '../service/data-dir';
import { BRIDGE_ARG_PREFIX, CHECK_SERVICE_CHANNEL, type BridgeInit, type ServiceCheck } from './bridge';
import type { ElectronMain, WebContents } from './electron-api';

/**
 * The Electron shell (style.md 14): boots the same service as `bin/backlot
 * serve` in this process, opens the launcher page, closes the service on quit.
 * Everything the user sees lives in renderer/ and talks to the service.
 *
 * Command line (after Electron's own): [--data-dir DIR] [--port N]. Without
 * --port it takes 7380 and falls back to a free port when 7380 is taken.
 */

const { app, BrowserWindow, ipcMain, session, dialog } = require('electron') as ElectronMain;

const DEFAULT_PORT = 7380;
const LAUNCHER_PAGE = join(app.getAppPath(), 'renderer', 'launcher', 'index.html');
const LAUNCHER_URL = pathToFileURL(LAUNCHER_PAGE).href;

let service: Service | null = null;
let bridge: BridgeInit | null = null;

function readArgs(): { dataDir: string; port: number | null } {
  // Packaged: [exe, ...args]; unpackaged: [electron, appDir, ...args].
  const { values } = parseArgs({
    args: process.argv.slice(app.isPackaged ? 1 : 2),
    options: { 'data-dir': { type: 'string' }, port: { type: 'string' } },
    strict: false, // Chromium switches (e.g. --enable-logging) pass through
    allowPositionals: true,
  });
  const port = typeof values.port === 'string' ? Number(values.port) : null;
  if (port !== null && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    throw new Error(`--port must be a whole number from 0 to 65535, not "${values.port}".`);
  }
  const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : defaultDataDir();
  return { dataDir, port };
}

async function startService(dataDir: string, port: number | null): Promise<{ service: Service; url: string }> {
  const s = createService({ dataDir });
  try {
    try {
      return { service: s, url: (await s.listen(port ?? DEFAULT_PORT)).url };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      // An explicit --port is the user's choice: in use is an error, as in `serve`.
      if (port !== null) throw new Error(`Port ${port} on 127.0.0.1 is already in use. Stop what holds it or pass another --port.`);
      console.warn(`Port ${DEFAULT_PORT} on 127.0.0.1 is in use; listening on a free port instead.`);
      return { service: s, url: (await s.listen(0)).url };
    }
  } catch (err) {
    await s.close();
    throw err;
  }
}

function isLauncherUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    u.hash = '';
    u.search = '';
    return u.href === LAUNCHER_URL;
  } catch {
    return false;
  }
}

/** The page stays the launcher: no navigation, no pop-ups, no webviews, no permissions. */
function lockDown(contents: WebContents): void {
  const refuse = (event: { preventDefault(): void }, url: string) => {
    if (!isLauncherUrl(url)) event.preventDefault();
  };
  contents.on('will-navigate', refuse);
  contents.on('will-redirect', refuse);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}

/** Asked by main, not the page: a file:// page's fetch is cross-site to the service. */
async function checkService(apiUrl: string): Promise<ServiceCheck> {
  try {
    const res = await fetch(`${apiUrl}/openapi.json`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) return { ok: false, error: `HTTP ${res.status}` };
    const doc = (await res.json()) as { info?: { title?: unknown; version?: unknown } };
    return { ok: true, title: String(doc.info?.title ?? ''), version: String(doc.info?.version ?? '') };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function openLauncher(init: BridgeInit): void {
  const win = new BrowserWindow({
    width: 960,
    height: 640,
    minWidth: 480,
    minHeight: 360,
    title: 'Backlot',
    show: false,
    backgroundColor: '#f6f5f2',
    webPreferences: {
      preload: join(__dirname, 'preload.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      additionalArguments: [`${BRIDGE_ARG_PREFIX}${JSON.stringify(init)}`],
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadFile(LAUNCHER_PAGE);
}

async function boot(): Promise<void> {
  const { dataDir, port } = readArgs();
  const started = await startService(dataDir, port);
  service = started.service;
  bridge = { apiUrl: `${started.url}/api/v1`, dataDir };
  console.log(`Backlot listening on ${started.url}`);
  console.error(`API ${bridge.apiUrl}, data dir ${dataDir}`);

  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  ipcMain.handle(CHECK_SERVICE_CHANNEL, (event) => {
    if (!isLauncherUrl(event.senderFrame?.url)) throw new Error('Only the launcher page may ask.');
    return checkService(bridge!.apiUrl);
  });
  openLauncher(bridge);
}

// One app per user: a second one would fight over the port and the database.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('web-contents-created', (_event, contents) => lockDown(contents));
  app.on('second-instance', () => {
    const win = BrowserWindow.getAllWindows()[0];
    if (win?.isMinimized()) win.restore();
    win?.focus();
  });
  app.on('activate', () => {
    if (bridge && BrowserWindow.getAllWindows().length === 0) openLauncher(bridge);
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  // Quitting waits for service.close() (connections ended, database closed).
  let closed = false;
  app.on('will-quit', (event) => {
    if (closed || !service) return;
    event.preventDefault();
    service
      .close()
      .catch((err: unknown) => console.error('Closing the service failed:', err))
      .finally(() => {
        closed = true;
        app.quit();
      });
  });
  // `npm start` forwards SIGINT/SIGTERM here; without this Electron would die without closing.
  process.on('SIGINT', () => app.quit());
  process.on('SIGTERM', () => app.quit());

  app.whenReady().then(boot).catch((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`Backlot could not start: ${message}`);
    dialog.showErrorBox('Backlot could not start', message);
    app.exit(1);
  });
}
