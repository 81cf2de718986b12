export { createKvStore } from './store';
export type { KvStore } from './store';
export { kvRoutes } from './routes';
