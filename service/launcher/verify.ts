import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { verifyFile } from './download';
import type { InstalledStudio, VerifiedDownload } from './store';

/**
 * Whether a studio's declared downloads are still what was verified
 * (else a start is 409 `not_fetched`): a file whose size and mtime are as recorded
 * is taken as is; one that changed is hashed again (off the main thread's
 * time: the reads are asynchronous), and only a sha256 mismatch or a missing
 * file makes it stale.
 */
export async function checkDownloads(s: InstalledStudio): Promise<VerifiedDownload[]> {
  const stale: VerifiedDownload[] = [];
  for (const d of s.manifest.download ?? []) {
    const path = resolve(s.app_dir, d.to);
    const known = s.downloads.find((v) => v.to === d.to && v.sha256 === d.sha256);
    const fallback = { to: d.to, sha256: d.sha256, size: -1, mtime_ms: -1 };
    let st;
    try {
      st = await stat(path);
    } catch {
      stale.push(known ?? fallback);
      continue;
    }
    if (!st.isFile()) {
      stale.push(known ?? fallback);
      continue;
    }
    if (known && known.size === st.size && known.mtime_ms === st.mtimeMs) continue;
    if (!(await verifyFile(path, d.sha256))) stale.push(known ?? fallback);
  }
  return stale;
}
