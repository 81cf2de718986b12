/**
 * The slice of Electron's API that main/ uses, declared here because the
 * `electron` package is an optional dependency: its binary download fails
 * offline, and `tsc` must pass without its types. Obtain it at run time with
 * `require('electron') as ElectronMain` (or `ElectronPreload` in the preload).
 * Keep this to what the shell calls; widen it only when the shell does.
 * test/helpers/electron-standin.ts implements exactly this for the tests.
 */

export interface PreventableEvent {
  preventDefault(): void;
}

export type WindowOpenAnswer =
  | { action: 'deny' }
  | { action: 'allow'; overrideBrowserWindowOptions: BrowserWindowOptions };

export interface WebContents {
  on(event: 'will-navigate' | 'will-redirect', listener: (event: PreventableEvent, url: string) => void): void;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): void;
  on(event: 'did-navigate', listener: (event: unknown, url: string) => void): void;
  on(
    event: 'did-create-window',
    listener: (window: BrowserWindow, details: { url: string; options: BrowserWindowOptions }) => void,
  ): void;
  setWindowOpenHandler(handler: (details: { url: string }) => WindowOpenAnswer): void;
  getURL(): string;
  /** The session the page runs in (its cookie jar and permission handlers). */
  readonly session: Session;
}

export interface WebPreferences {
  preload?: string;
  contextIsolation: true;
  sandbox: true;
  nodeIntegration: false;
  webSecurity: true;
  /** No <webview> in any page. */
  webviewTag: false;
  /** Session partition: `persist:studio-<id>` for a studio's windows; absent = the default session. */
  partition?: string;
}

export interface BrowserWindowOptions {
  width?: number;
  height?: number;
  minWidth?: number;
  minHeight?: number;
  title?: string;
  show?: boolean;
  backgroundColor?: string;
  webPreferences: WebPreferences;
}

export interface BrowserWindow {
  readonly webContents: WebContents;
  loadURL(url: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): void;
  on(event: 'close', listener: (event: PreventableEvent) => void): void;
  on(event: 'closed', listener: () => void): void;
  show(): void;
  hide(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
  isVisible(): boolean;
}

export interface IpcMainInvokeEvent {
  /** The frame that sent the message; null once it navigated away or was destroyed. */
  readonly senderFrame: { readonly url: string } | null;
}

export interface Session {
  setPermissionRequestHandler(
    handler: (contents: WebContents, permission: string, callback: (granted: boolean) => void) => void,
  ): void;
  setPermissionCheckHandler(handler: (contents: WebContents | null, permission: string) => boolean): void;
}

export interface ElectronMain {
  app: {
    readonly isPackaged: boolean;
    whenReady(): Promise<void>;
    requestSingleInstanceLock(): boolean;
    getAppPath(): string;
    quit(): void;
    exit(code?: number): void;
    on(event: 'window-all-closed' | 'activate' | 'second-instance', listener: () => void): void;
    on(event: 'before-quit' | 'will-quit', listener: (event: PreventableEvent) => void): void;
    on(event: 'web-contents-created', listener: (event: unknown, contents: WebContents) => void): void;
  };
  BrowserWindow: {
    new (options: BrowserWindowOptions): BrowserWindow;
    getAllWindows(): BrowserWindow[];
  };
  ipcMain: {
    handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown): void;
  };
  session: {
    readonly defaultSession: Session;
    fromPartition(partition: string): Session;
  };
  dialog: {
    showErrorBox(title: string, content: string): void;
    showOpenDialog(
      window: BrowserWindow,
      options: { title?: string; properties: Array<'openDirectory' | 'createDirectory'> },
    ): Promise<{ canceled: boolean; filePaths: string[] }>;
  };
  shell: {
    /** Opens an http(s) address in the person's default browser. */
    openExternal(url: string): Promise<void>;
  };
}

export interface ElectronPreload {
  contextBridge: {
    exposeInMainWorld(apiKey: string, api: unknown): void;
  };
  ipcRenderer: {
    invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  };
}
