import { closeSync, constants, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
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

/**
 * Replaces `file` whole: the text goes to `<file>.<pid>.tmp` (mode 0600), is
 * fsynced and renamed over `file`, so a reader sees the old or the new file,
 * never a part. The folder itself is not synced (see `syncDir`).
 */
export function replaceFileSync(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
