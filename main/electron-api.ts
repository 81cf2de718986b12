/**
 * The slice of Electron's API that main/ uses, declared here because the
 * `electron` package is an optional dependency: its binary download fails
 * offline, and `tsc` must pass without its types. Obtain it at run time with
 * `require('electron') as ElectronMain` (or `ElectronPreload` in the preload).
 * Keep this to what the shell calls; widen it only when the shell does.
 */

export interface PreventableEvent {
  preventDefault(): void;
}

export interface WebContents {
  on(event: 'will-navigate' | 'will-redirect', listener: (event: PreventableEvent, url: string) => void): void;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): void;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
}

export interface BrowserWindowOptions {
  width?: number;
  height?: number;
  minWidth?: number;
  minHeight?: number;
  title?: string;
  show?: boolean;
  backgroundColor?: string;
  webPreferences: {
    preload: string;
    contextIsolation: true;
    sandbox: true;
    nodeIntegration: false;
    webSecurity: true;
    /** Appended to the renderer's process.argv: readable by a sandboxed preload. */
    additionalArguments?: string[];
  };
}

export interface BrowserWindow {
  readonly webContents: WebContents;
  loadFile(filePath: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): void;
  show(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
}

export interface IpcMainInvokeEvent {
  /** The frame that sent the message; null once it navigated away or was destroyed. */
  readonly senderFrame: { readonly url: string } | null;
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
    on(event: 'will-quit', listener: (event: PreventableEvent) => void): void;
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
    defaultSession: {
      setPermissionRequestHandler(handler: (contents: WebContents, permission: string, callback: (granted: boolean) => void) => void): void;
    };
  };
  dialog: {
    showErrorBox(title: string, content: string): void;
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
