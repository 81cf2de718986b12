import { onStudiosChanged, type Studio } from '../studios';
import { studioChangedForOpen } from './open';
import { createPermissions } from './permissions';
import { createRequests } from './requests';
import type { Handoff } from '../../lib/api-types';

/**
 * The launcher's side of handoffs ("Send to" between studios, approved by the person;
 * renderer/README.md "Launcher: requests and permissions"): the Requests region (requests.ts, its cards
 * card.ts, opening the recipient open.ts) and the Permissions view (permissions.ts).
 * main.ts places the two elements, calls `load()` once signed in and on every open of
 * the event stream, and passes `handoff` and `studio` events on.
 */

export interface HandoffsPanels {
  requests: HTMLElement;
  permissions: HTMLElement;
  /** Reads the pending requests and the standing rules (at start and after a reconnect). */
  load(): void;
  handoffEvent(ho: Handoff): void;
  studioEvent(s: Studio & { removed?: boolean }): void;
}

export function handoffsPanels(): HandoffsPanels {
  const permissions = createPermissions();
  const requests = createRequests({ rulesChanged: () => void permissions.load() });
  // Cards and rules name studios: a studio installed, renamed or removed is said anew.
  onStudiosChanged(() => {
    requests.studiosChanged();
    permissions.studiosChanged();
  });
  return {
    requests: requests.element,
    permissions: permissions.element,
    load() {
      void requests.load();
      void permissions.load();
    },
    handoffEvent: requests.handoffEvent,
    studioEvent: studioChangedForOpen,
  };
}
