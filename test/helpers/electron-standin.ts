import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import type {
  BrowserWindowOptions,
  ElectronMain,
  HandlerDetails,
  InputEvent,
  IpcMainInvokeEvent,
  PreventableEvent,
  Session,
  WindowOpenAnswer,
} from '../../main/electron-api';

/**
 * A small stand-in of the Electron API for the shell's tests: no Electron
 * binary can be had on these machines. It implements the part of the real
 * API (the `electron` package's declarations, main/electron-api.ts) that the
 * shell calls, with the real signatures; `asReal` is the one cast to the
 * whole API's types. It does what the shell relies on and records the rest:
 * - a window's loadURL really fetches the page over HTTP with its session's
 *   cookie jar, follows redirects (each one through `will-redirect`, which the
 *   shell may refuse), keeps Set-Cookie, then emits `did-navigate`;
 * - a page's own actions are methods the test calls: `navigate(url)` (a link:
 *   `will-navigate` first), `popup(url)` (window.open through the open handler),
 *   `input(type)` (the person clicks or types: `input-event`);
 * - app.quit() runs before-quit (preventable), closes every window (its
 *   `close` is preventable), then will-quit, as Electron does.
 * Script in the pages does not run: what the pages do is tested in Chromium.
 * A session keeps a localStorage per origin, as Electron's do, for a test
 * that acts as a page's script (the launcher page keeps its credential there).
 */

/**
 * The one cast between the stand-in and the real API's types: the stand-in
 * implements only the parts the shell uses (with their real signatures), and
 * hands the shell, or receives from it, values typed as the whole.
 */
function asReal<T>(partial: unknown): T {
  return partial as T;
}

class Preventable implements PreventableEvent {
  prevented = false;
  preventDefault(): void {
    this.prevented = true;
  }
}

export class StandInSession implements Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler'> {
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
  /** A page asks for `permission`: what the shell's handler answers. */
  ask(permission: string): Promise<boolean> {
    const handler = asReal<(contents: unknown, permission: string, callback: (granted: boolean) => void, details: unknown) => void>(this.requestHandler);
    return new Promise((resolve) => handler({}, permission, resolve, { requestingUrl: '' }));
  }
  /** A page checks `permission`: what the shell's check handler says. */
  check(permission: string): boolean {
    const handler = asReal<(contents: unknown, permission: string, origin: string, details: unknown) => boolean>(this.checkHandler);
    return handler({}, permission, '', {});
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

/** The event object of `will-navigate` / `will-redirect` (WebContentsWillNavigateEventParams). */
class NavigationEvent extends Preventable {
  readonly isSameDocument = false;
  readonly frame = null;
  constructor(
    readonly url: string,
    readonly isMainFrame: boolean,
  ) {
    super();
  }
}

export class StandInContents extends EventEmitter {
  url = '';
  /** The last page fetched: status and body. */
  page: { status: number; body: string } | null = null;
  openHandler: ((details: HandlerDetails) => WindowOpenAnswer) | null = null;
  constructor(readonly session: StandInSession) {
    super();
  }
  override on(event: string, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }
  setWindowOpenHandler(handler: (details: HandlerDetails) => WindowOpenAnswer): void {
    this.openHandler = handler;
  }
  getURL(): string {
    return this.url;
  }
  /** A link the page follows: false when the shell refused it. */
  async navigate(url: string): Promise<boolean> {
    const event = new NavigationEvent(url, true);
    this.emit('will-navigate', event, url);
    if (event.prevented) return false;
    return this.load(url);
  }
  /** window.open from the page (or a target=_blank link: `foreground-tab`): the open handler's answer. */
  popup(url: string, disposition: HandlerDetails['disposition'] = 'new-window'): WindowOpenAnswer {
    if (!this.openHandler) throw new Error('no window open handler');
    return this.openHandler({ url, frameName: '', features: '', disposition, referrer: { url: this.url, policy: 'strict-origin-when-cross-origin' } });
  }
  /** The person's input reaching the page: `mouseDown`, `keyDown`, `mouseMove` ... */
  input(type: InputEvent['type'], modifiers: InputEvent['modifiers'] = []): void {
    this.emit('input-event', new Preventable(), { type, modifiers });
  }
  /** A frame inside the page is redirected (not the page itself): whether the shell stopped it. */
  subframeRedirect(url: string): boolean {
    const event = new NavigationEvent(url, false);
    this.emit('will-redirect', event, url);
    return event.prevented;
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
        const event = new NavigationEvent(next, true);
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

export class StandInWindow extends EventEmitter {
  readonly webContents: StandInContents;
  /** options.webPreferences as given. */
  readonly preferences: NonNullable<BrowserWindowOptions['webPreferences']>;
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
    this.preferences = options.webPreferences ?? {};
    const partition = this.preferences.partition;
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
  readonly folderDialogs: Array<{ window: StandInWindow; properties: string[] }> = [];
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

  /**
   * The object the shell gets in place of require('electron'): the parts it
   * calls, with the real API's parameter types, cast (asReal) to the whole.
   */
  api(): ElectronMain {
    const self = this;
    class BW extends StandInWindow {
      constructor(options: BrowserWindowOptions) {
        super(self, options);
      }
      static getAllWindows(): StandInWindow[] {
        return [...self.windows];
      }
    }
    const part = {
      app: this.app,
      BrowserWindow: BW,
      ipcMain: {
        handle: (channel: string, listener: (event: IpcMainInvokeEvent, ...args: any[]) => unknown) => void this.handlers.set(channel, listener),
      },
      session: this.session,
      dialog: {
        showErrorBox: (title: string, content: string) => void this.errorBoxes.push({ title, content }),
        showOpenDialog: async (window: StandInWindow, options: { properties?: string[] }) => {
          this.folderDialogs.push({ window, properties: options.properties ?? [] });
          return this.folderAnswer;
        },
      },
      shell: { openExternal: async (url: string) => void this.external.push(url) },
    };
    return asReal<ElectronMain>(part);
  }

  /** The stand-in behind a window the shell reports (ShellState's windows are typed as the real API's). */
  own(win: unknown): StandInWindow {
    if (!(win instanceof StandInWindow)) throw new Error('not a stand-in window');
    return win;
  }

  /** An ipcRenderer.invoke from a frame showing `frameUrl`. */
  invoke(channel: string, frameUrl: string | null, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) return Promise.reject(new Error(`no handler for ${channel}`));
    const event = asReal<IpcMainInvokeEvent>({ senderFrame: frameUrl === null ? null : { url: frameUrl } });
    return Promise.resolve().then(() => handler(event, ...args));
  }
}
