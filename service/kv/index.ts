export { createKvStore, KV_SQL } from './store';
export type { KvStore } from './store';
export { kvRoutes } from './routes';
