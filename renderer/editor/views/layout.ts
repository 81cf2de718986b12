import { h, replace } from '../../lib/dom';
import { tc, totalFrames, view } from '../read';
import { binPanel } from './bin';
import { browserPanel, browserToggle } from './browser';
import { exportPanel } from './export';
import { inspector } from './inspector';
import { revisionList } from './revisions';
import { scroller } from './timeline';
import { keyList, toolbar } from './toolbar';
import { viewerPanel } from './viewer';

/** The page's frame: header, status line, the alert, and the surface of the open sequence (or the wait for one). */

const connection = h('span', { class: 'connection muted', role: 'status' }, 'Connecting…');
const statusLine = h('p', { id: 'editor-status', class: 'status-line', role: 'status', 'aria-live': 'polite' });
const problem = h('div', { class: 'problem', role: 'alert', hidden: true });
const waiting = h('p', { class: 'waiting' }, 'No sequence is open. Choose one below, or a studio shows one here with POST /timeline/{id}:open while this page is connected.');
const surface = h('main', { class: 'surface', hidden: true, 'aria-labelledby': 'seq-title' });
const title = h('h2', { id: 'seq-title' });
const meta = h('p', { class: 'muted meta' });

export function buildPage(root: HTMLElement): void {
  replace(
    surface,
    h('div', { class: 'seq-head' }, title, meta),
    toolbar,
    keyList,
    scroller,
    h('div', { class: 'work' }, viewerPanel, inspector),
    binPanel,
    h(
      'div',
      { class: 'work' },
      exportPanel,
      h('section', { class: 'panel', 'aria-labelledby': 'revisions-title' }, h('h3', { id: 'revisions-title' }, 'Revisions'), revisionList),
    ),
  );
  replace(root, h('header', { class: 'top' }, h('h1', {}, 'Backlot editor'), connection, browserToggle), statusLine, problem, waiting, browserPanel, surface);
}

export function drawHead(): void {
  const tl = view.tl;
  waiting.hidden = tl !== null;
  surface.hidden = tl === null;
  if (!tl) return;
  title.textContent = tl.name;
  meta.textContent = `${tl.studio_id} · revision ${tl.revision} · ${tc(totalFrames())} · ${tl.target.width}×${tl.target.height} at ${tl.target.fps} fps`;
}

export function drawStatus(): void {
  statusLine.textContent = view.status.text;
  statusLine.classList.toggle('notice', view.status.notice);
  const p = view.problem;
  problem.hidden = p === null;
  replace(problem, p?.text ?? null, p && p.details.length ? h('ul', {}, ...p.details.map((d) => h('li', {}, d))) : null);
}

export function drawConnection(): void {
  connection.textContent = view.connection.text;
  if (view.connection.state !== 'connecting') connection.dataset.state = view.connection.state;
}
