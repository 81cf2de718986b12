/**
 * The contract between the main process, the preload and the launcher page:
 * the one object the preload exposes as `window.backlot`. The page is plain
 * JavaScript (renderer/launcher/launcher.js) and relies on exactly this shape.
 *
 * The preload runs sandboxed and may require nothing but `electron`, so it
 * imports this file with `import type` only and repeats the two strings below
 * as literals typed `typeof ...` (the compiler keeps them equal).
 */

/** ipcMain.handle channel behind `checkService()`. */
export const CHECK_SERVICE_CHANNEL = 'backlot:check-service';

/** Prefix of the webPreferences.additionalArguments entry carrying the bridge's JSON. */
export const BRIDGE_ARG_PREFIX = '--backlot-bridge=';

/** What main hands the preload at window creation. */
export interface BridgeInit {
  /** base_url: http://127.0.0.1:PORT/api/v1 (decisions §1). */
  apiUrl: string;
  dataDir: string;
}

/**
 * The service's answer to GET {apiUrl}/openapi.json, asked by main: the page
 * is a file:// document, so the service (no CORS, cross-site requests refused,
 * decisions §2) would not answer its own fetch.
 */
export type ServiceCheck =
  | { ok: true; title: string; version: string }
  | { ok: false; error: string };

export interface BacklotBridge extends BridgeInit {
  checkService(): Promise<ServiceCheck>;
}
