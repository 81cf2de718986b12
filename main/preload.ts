import type { BacklotBridge, PICK_FOLDER_CHANNEL } from './bridge';
import type { ElectronPreload } from './electron-api';

/**
 * Exposes `window.backlot` (BacklotBridge: the folder picker) to the launcher
 * page and nothing else: no ipcRenderer, no Node. Runs sandboxed, so its only
 * require is `electron`; everything from ./bridge is type-only. Only the
 * launcher window loads it; the editor's and the studios' windows have none.
 */

const { contextBridge, ipcRenderer } = require('electron') as ElectronPreload;

const pickChannel: typeof PICK_FOLDER_CHANNEL = 'backlot:pick-folder';

const bridge: BacklotBridge = {
  pickFolder: async () => {
    const path = await ipcRenderer.invoke(pickChannel);
    return typeof path === 'string' ? path : null;
  },
};

contextBridge.exposeInMainWorld('backlot', bridge);
