import { onCredentialChange } from '../../lib/credential';
import type { Job } from '../../lib/job';
import { EventStream } from '../../lib/sse';
import { requestRender, state } from '../state';
import type { Timeline } from '../types';
import { loadExports, open } from './document';
import { addressedId, followAddress, loadSequences, loadStudios } from './sequences';
import { jobChanged } from './exports';

/** The page's live channels: /editor/events (which sequence to show) and the launcher's job events (export progress). */
export function connect(): void {
  const events = new EventStream('/editor/events');
  let first = true;
  events.addEventListener('hello', () => {
    state.connection = { state: 'connected', text: 'Connected' };
    requestRender('connection');
    // Once connected (an :open reaches only connected pages): what the address names, and the list to choose from.
    if (!first) return;
    first = false;
    if (addressedId()) followAddress();
    void loadSequences();
    void loadStudios();
  });
  window.addEventListener('hashchange', followAddress);
  // The channel's `open` event shares its name with EventSource's own (connected, no data): only one with data is a sequence.
  events.addEventListener('open', (e) => {
    const raw = (e as MessageEvent<string>).data;
    if (typeof raw !== 'string') return;
    const data = JSON.parse(raw) as { timeline: Timeline; studio_id: string };
    void open(data.timeline, data.studio_id);
  });
  events.addEventListener('error', () => {
    state.connection = {
      state: 'disconnected',
      text: events.readyState === EventStream.CLOSED ? 'Not connected: sign in to the launcher first (bin/backlot login-url), then reload.' : 'Reconnecting…',
    };
    requestRender('connection');
  });
  // Refused (no credential yet: the desktop shell's hidden window can load before the launcher page
  // signed in) and the launcher page of this origin has stored one since: start again with it.
  onCredentialChange(() => {
    if (events.readyState === EventStream.CLOSED) location.reload();
  });

  // Export progress, live (every studio's jobs: only this sequence's are kept).
  const jobs = new EventStream('/api/v1/launcher/events');
  jobs.addEventListener('job', (e) => jobChanged(JSON.parse((e as MessageEvent<string>).data) as Job));
  // After a dropped connection the list is read again: events are live only.
  jobs.addEventListener('open', () => {
    if (state.tl) void loadExports();
  });
}
