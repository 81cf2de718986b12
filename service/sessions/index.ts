export { createSessionsStore, SESSIONS_SQL, purgeStudioSessions } from './store';
export type { SessionsStore } from './store';
export { sessionRoutes } from './routes';
