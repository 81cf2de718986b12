export { createKvStore, KV_SQL, purgeStudioKv } from './store';
export type { KvStore } from './store';
export { kvRoutes } from './routes';
