import { closeSync, constants, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Creates a folder and its missing parents with `mode`. Written out instead of
 * mkdirSync({recursive: true}), which on Node 20 spins forever when a parent
 * refuses new entries (e.g. under /proc).
 */
export function ensureDir(path: string, mode = 0o700): void {
  const target = resolve(path);
  const missing: string[] = [];
  for (let dir = target; ; dir = dirname(dir)) {
    try {
      mkdirSync(dir, { mode });
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') break;
      if (code !== 'ENOENT' || dirname(dir) === dir) throw err;
      missing.push(dir);
    }
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** Makes a rename or unlink in `dir` durable. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
