export { createSessionsStore } from './store';
export type { SessionsStore } from './store';
export { sessionRoutes } from './routes';
