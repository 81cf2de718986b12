import { h, replace } from '../lib/dom';
import { duration } from '../lib/format';

/**
 * The editor surface (issue 18 item 3) at /editor/: stays connected to
 * /editor/events and shows the sequence the last `:open` named. This first
 * version shows what was opened; editing comes on top of it.
 */

interface Clip {
  asset_id: string;
  start: number;
  in: number;
  duration: number;
}

interface Timeline {
  id: string;
  studio_id: string;
  name: string;
  revision: number;
  duration: number;
  target: { fps: number; width: number; height: number; sample_rate: number };
  tracks: Record<string, Clip[]>;
}

const root = document.getElementById('app')!;
const status = h('span', { class: 'connection muted', role: 'status', 'aria-live': 'polite' }, 'Connecting…');
const stage = h('main', { class: 'stage' }, h('p', { class: 'waiting' }, 'Waiting for a studio to open a sequence here.'));

function show(timeline: Timeline, studioId: string): void {
  const names = Object.keys(timeline.tracks).sort();
  replace(
    stage,
    h('h2', {}, timeline.name),
    h('p', { class: 'muted' }, `${studioId} · revision ${timeline.revision} · ${duration(timeline.duration)} · ${timeline.target.width}×${timeline.target.height} at ${timeline.target.fps} fps`),
    h(
      'ul',
      { class: 'tracks', 'aria-label': 'Tracks' },
      ...names.map((name) =>
        h('li', { class: 'track' }, h('span', { class: 'track-name' }, name), h('span', {}, `${timeline.tracks[name]!.length} clip(s)`)),
      ),
    ),
  );
}

function connect(): void {
  const events = new EventSource('/editor/events');
  events.addEventListener('hello', () => {
    status.textContent = 'Connected';
  });
  events.addEventListener('open', (e) => {
    const data = JSON.parse((e as MessageEvent<string>).data) as { timeline: Timeline; studio_id: string };
    show(data.timeline, data.studio_id);
  });
  events.addEventListener('error', () => {
    status.textContent = events.readyState === EventSource.CLOSED ? 'Not connected: sign in to the launcher first (bin/backlot login-url), then reload.' : 'Reconnecting…';
  });
}

replace(root, h('header', { class: 'top' }, h('h1', {}, 'Backlot editor'), status), stage);
connect();
