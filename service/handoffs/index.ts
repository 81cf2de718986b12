export { createHandoffs, HANDOFF_TTL_MS, MAX_PENDING } from './domain';
export type { HandoffsDomain, HandoffsDeps, Recipient } from './domain';
export { handoffRoutes } from './routes';
export { handoffReferenceSources, HANDOFF_STATES } from './store';
export type { Handoff, LauncherHandoff } from './view';
