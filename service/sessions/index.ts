export { createSessionsStore, SESSIONS_SQL } from './store';
export type { SessionsStore } from './store';
export { sessionRoutes } from './routes';
