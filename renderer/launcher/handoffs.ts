/** Requests and permissions live in handoffs/; main.ts places them. */
export { handoffsPanels, type HandoffsPanels } from './handoffs/panel';
