import type { BacklotBridge, BridgeInit, BRIDGE_ARG_PREFIX, CHECK_SERVICE_CHANNEL, ServiceCheck } from './bridge';
import type { ElectronPreload } from './electron-api';

/**
 * Exposes `window.backlot` (BacklotBridge) to the launcher page and nothing
 * else: no ipcRenderer, no Node. Runs sandboxed, so its only require is
 * `electron`; everything from ./bridge is type-only.
 */

const { contextBridge, ipcRenderer } = require('electron') as ElectronPreload;

const argPrefix: typeof BRIDGE_ARG_PREFIX = '--backlot-bridge=';
const checkChannel: typeof CHECK_SERVICE_CHANNEL = 'backlot:check-service';

const arg = process.argv.find((a) => a.startsWith(argPrefix));
const init = JSON.parse(arg ? arg.slice(argPrefix.length) : '{}') as Partial<BridgeInit>;

const bridge: BacklotBridge = {
  apiUrl: String(init.apiUrl ?? ''),
  dataDir: String(init.dataDir ?? ''),
  checkService: () => ipcRenderer.invoke(checkChannel) as Promise<ServiceCheck>,
};

contextBridge.exposeInMainWorld('backlot', bridge);
