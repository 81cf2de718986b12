import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import type {
  BrowserWindow,
  BrowserWindowOptions,
  ElectronMain,
  IpcMainInvokeEvent,
  PreventableEvent,
  Session,
  WebContents,
  WindowOpenAnswer,
} from '../../main/electron-api';

/**
 * A small stand-in of the Electron API (main/electron-api.ts) for the shell's
 * tests: no Electron binary can be had on these machines. It does what the
 * shell relies on and records the rest:
 * - a window's loadURL really fetches the page over HTTP with its session's
 *   cookie jar, follows redirects (each one through `will-redirect`, which the
 *   shell may refuse), keeps Set-Cookie, then emits `did-navigate`;
 * - a page's own actions are methods the test calls: `navigate(url)` (a link:
 *   `will-navigate` first), `popup(url)` (window.open through the open handler);
 * - app.quit() runs before-quit (preventable), closes every window (its
 *   `close` is preventable), then will-quit, as Electron does.
 * Script in the pages does not run: what the pages do is tested in Chromium.
 * A session keeps a localStorage per origin, as Electron's do, for a test
 * that acts as a page's script (the launcher page keeps its credential there).
 */

class Preventable implements PreventableEvent {
  prevented = false;
  preventDefault(): void {
    this.prevented = true;
  }
}

export class StandInSession implements Session {
  readonly cookies = new Map<string, string>();
  private readonly storages = new Map<string, Map<string, string>>();
  requestHandler: Parameters<Session['setPermissionRequestHandler']>[0] | null = null;
  checkHandler: Parameters<Session['setPermissionCheckHandler']>[0] | null = null;
  constructor(readonly partition: string) {}
  setPermissionRequestHandler(handler: Parameters<Session['setPermissionRequestHandler']>[0]): void {
    this.requestHandler = handler;
  }
  setPermissionCheckHandler(handler: Parameters<Session['setPermissionCheckHandler']>[0]): void {
    this.checkHandler = handler;
  }
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  /** The localStorage of an origin (`http://127.0.0.1:PORT`) in this session. */
  localStorage(origin: string): Map<string, string> {
    let m = this.storages.get(origin);
    if (!m) this.storages.set(origin, (m = new Map()));
    return m;
  }
  /** Every origin's stored entries, for a test that something is nowhere in a session. */
  storedValues(): string[] {
    return [...this.storages.values()].flatMap((m) => [...m.values()]);
  }
}

export class StandInContents extends EventEmitter implements WebContents {
  url = '';
  /** The last page fetched: status and body. */
  page: { status: number; body: string } | null = null;
  openHandler: ((details: { url: string }) => WindowOpenAnswer) | null = null;
  constructor(readonly session: StandInSession) {
    super();
  }
  override on(event: string, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }
  setWindowOpenHandler(handler: (details: { url: string }) => WindowOpenAnswer): void {
    this.openHandler = handler;
  }
  getURL(): string {
    return this.url;
  }
  /** A link the page follows: false when the shell refused it. */
  async navigate(url: string): Promise<boolean> {
    const event = new Preventable();
    this.emit('will-navigate', event, url);
    if (event.prevented) return false;
    return this.load(url);
  }
  /** window.open from the page: the open handler's answer. */
  popup(url: string): WindowOpenAnswer {
    if (!this.openHandler) throw new Error('no window open handler');
    return this.openHandler({ url });
  }
  /** <webview> attaching: whether it was refused. */
  attachWebview(): boolean {
    const event = new Preventable();
    this.emit('will-attach-webview', event);
    return event.prevented;
  }

  async load(url: string): Promise<boolean> {
    let target = url;
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetchWithJar(target, this.session);
      if (res.status >= 300 && res.status < 400 && res.location) {
        const next = new URL(res.location, target).href;
        const event = new Preventable();
        this.emit('will-redirect', event, next);
        if (event.prevented) return false;
        target = next;
        continue;
      }
      this.url = target;
      this.page = { status: res.status, body: res.body };
      this.emit('did-navigate', {}, target);
      return true;
    }
    throw new Error(`too many redirects from ${url}`);
  }
}

function fetchWithJar(url: string, jar: StandInSession): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'http:' || !u.hostname.endsWith('localhost') && u.hostname !== '127.0.0.1') {
      resolve({ status: 0, body: '' }); // the stand-in reaches nothing outside loopback
      return;
    }
    const headers: Record<string, string> = { Host: u.host, 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate' };
    const cookie = jar.cookieHeader();
    if (cookie) headers.Cookie = cookie;
    const req = request({ host: '127.0.0.1', port: Number(u.port), path: u.pathname + u.search, headers, setHost: false }, (res) => {
      for (const line of res.headers['set-cookie'] ?? []) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        jar.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c.length < 1_000_000 ? c : ''));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

export class StandInWindow extends EventEmitter implements BrowserWindow {
  readonly webContents: StandInContents;
  visible: boolean;
  minimized = false;
  destroyed = false;
  focused = 0;
  readonly loads: string[] = [];
  constructor(
    private readonly electron: StandIn,
    readonly options: BrowserWindowOptions,
  ) {
    super();
    const partition = options.webPreferences.partition;
    this.webContents = new StandInContents(partition ? electron.session.fromPartition(partition) : electron.session.defaultSession);
    this.visible = options.show !== false;
    electron.windows.push(this);
    electron.app.emit('web-contents-created', {}, this.webContents);
  }
  override on(event: string, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }
  override once(event: string, listener: (...args: any[]) => void): this {
    return super.once(event, listener);
  }
  async loadURL(url: string): Promise<void> {
    this.loads.push(url);
    await this.webContents.load(url);
    this.emit('ready-to-show');
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  focus(): void {
    this.focused++;
  }
  restore(): void {
    this.minimized = false;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isVisible(): boolean {
    return this.visible;
  }
  /** The person (or app.quit) closes it: false when the shell kept it. */
  close(): boolean {
    const event = new Preventable();
    this.emit('close', event);
    if (event.prevented) return false;
    this.destroyed = true;
    this.electron.windows.splice(this.electron.windows.indexOf(this), 1);
    this.emit('closed');
    if (this.electron.windows.length === 0) this.electron.app.emit('window-all-closed');
    return true;
  }
}

class StandInApp extends EventEmitter {
  readonly isPackaged = false;
  lock = true;
  quitCalls = 0;
  exitCode: number | null = null;
  /** Set once will-quit ran: the app would end here. */
  ended = false;
  constructor(private readonly electron: StandIn) {
    super();
  }
  override on(event: string, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
  requestSingleInstanceLock(): boolean {
    return this.lock;
  }
  getAppPath(): string {
    return '/standin/app';
  }
  quit(): void {
    this.quitCalls++;
    const before = new Preventable();
    this.emit('before-quit', before);
    if (before.prevented) return;
    for (const win of [...this.electron.windows]) if (!win.close()) return;
    const will = new Preventable();
    this.emit('will-quit', will);
    if (!will.prevented) this.ended = true;
  }
  exit(code = 0): void {
    this.exitCode = code;
    this.ended = true;
  }
}

export class StandIn {
  readonly windows: StandInWindow[] = [];
  readonly app = new StandInApp(this);
  readonly handlers = new Map<string, (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown>();
  readonly external: string[] = [];
  readonly errorBoxes: Array<{ title: string; content: string }> = [];
  readonly folderDialogs: Array<{ window: BrowserWindow; properties: string[] }> = [];
  /** What the next folder dialog answers. */
  folderAnswer: { canceled: boolean; filePaths: string[] } = { canceled: true, filePaths: [] };
  private readonly partitions = new Map<string, StandInSession>();

  readonly session = {
    defaultSession: new StandInSession(''),
    fromPartition: (partition: string): StandInSession => {
      let s = this.partitions.get(partition);
      if (!s) this.partitions.set(partition, (s = new StandInSession(partition)));
      return s;
    },
  };

  /** The object the shell gets in place of require('electron'). */
  api(): ElectronMain {
    const self = this;
    class BW extends StandInWindow {
      constructor(options: BrowserWindowOptions) {
        super(self, options);
      }
      static getAllWindows(): BrowserWindow[] {
        return [...self.windows];
      }
    }
    return {
      app: this.app as unknown as ElectronMain['app'],
      BrowserWindow: BW,
      ipcMain: { handle: (channel, listener) => void this.handlers.set(channel, listener) },
      session: this.session,
      dialog: {
        showErrorBox: (title, content) => void this.errorBoxes.push({ title, content }),
        showOpenDialog: async (window, options) => {
          this.folderDialogs.push({ window, properties: options.properties });
          return this.folderAnswer;
        },
      },
      shell: { openExternal: async (url) => void this.external.push(url) },
    };
  }

  /** An ipcRenderer.invoke from a frame showing `frameUrl`. */
  invoke(channel: string, frameUrl: string | null, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) return Promise.reject(new Error(`no handler for ${channel}`));
    return Promise.resolve().then(() => handler({ senderFrame: frameUrl === null ? null : { url: frameUrl } }, ...args));
  }
}
