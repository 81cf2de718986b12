export { createStudiosStore, DEFAULT_QUOTA_KV_BYTES, DEFAULT_QUOTA_RECORDS } from './store';
export type { Studio, StudiosStore, QuotaName } from './store';
export { createLauncherCredentials, LAUNCHER_SQL } from './launcher';
export type { LauncherCredentials } from './launcher';
