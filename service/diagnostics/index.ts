/** Diagnostics for the launcher's "Copy diagnostics" (README.md). */
export { diagnosticsRoutes } from './routes';
export { collectDiagnostics, maskSecrets, LOG_DIR, LOG_FILE, LOG_LINES } from './collect';
export type { Diagnostics, DiagnosticsDeps } from './collect';
