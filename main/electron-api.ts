import type * as electron from 'electron';

/**
 * The slice of Electron's API the shell uses, typed by the real declarations
 * of the `electron` package (a devDependency: its types install offline; its
 * binary is fetched apart, `npm run electron:fetch`). main/ obtains the API
 * at run time with `require('electron') as ElectronMain`, so the tests can hand
 * the shell a stand-in of the same shape (test/helpers/electron-standin.ts).
 */
export type ElectronMain = Pick<typeof electron, 'app' | 'BrowserWindow' | 'ipcMain' | 'session' | 'dialog' | 'shell'>;
export type ElectronPreload = Pick<typeof electron, 'contextBridge' | 'ipcRenderer'>;

export type BrowserWindow = electron.BrowserWindow;
export type BrowserWindowOptions = electron.BrowserWindowConstructorOptions;
export type WebContents = electron.WebContents;
export type Session = electron.Session;
export type IpcMainInvokeEvent = electron.IpcMainInvokeEvent;
export type HandlerDetails = electron.HandlerDetails;
export type InputEvent = electron.InputEvent;
export type WindowOpenAnswer = ReturnType<Parameters<WebContents['setWindowOpenHandler']>[0]>;
export interface PreventableEvent {
  preventDefault(): void;
}
