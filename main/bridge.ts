/**
 * The contract between the main process, the preload and the launcher page:
 * the one object the preload exposes as `window.backlot` in the desktop app.
 * In a plain browser it is absent, and the page falls back to a path field.
 *
 * The preload runs sandboxed and may require nothing but `electron`, so it
 * imports this file with `import type` only and repeats the string below as a
 * literal typed `typeof ...` (the compiler keeps them equal).
 */

/** ipcMain.handle channel behind `pickFolder()`; answered only for the launcher page's frame. */
export const PICK_FOLDER_CHANNEL = 'backlot:pick-folder';

export interface BacklotBridge {
  /** The native folder picker: the chosen absolute path, or null when the person cancelled. */
  pickFolder(): Promise<string | null>;
}
