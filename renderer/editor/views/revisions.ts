import { h } from '../../lib/dom';
import { when } from '../../lib/format';
import { revert } from '../actions/edits';
import { clipCount, view } from '../read';

export const revisionList = h('ol', { class: 'revisions', 'aria-label': 'Earlier revisions, newest first' });

export function drawRevisions(): void {
  const tl = view.tl;
  if (!tl) return;
  const current = h(
    'li',
    { class: 'revision current', 'aria-current': 'true' },
    h('span', { class: 'rev' }, `Revision ${tl.revision}`),
    h('span', { class: 'what' }, tl.description ?? `${clipCount(tl.tracks)} clip(s)`),
    h('span', { class: 'muted' }, `current · ${when(tl.updated_at)}`),
  );
  const rows = view.revisions.map((r) => {
    const restore = h('button', { type: 'button', 'aria-label': `Restore revision ${r.revision}` }, 'Restore');
    restore.addEventListener('click', () => void revert(r.revision, `Restore revision ${r.revision}`));
    return h(
      'li',
      { class: 'revision', 'data-revision': r.revision },
      h('span', { class: 'rev' }, `Revision ${r.revision}`),
      h('span', { class: 'what' }, r.description ?? `${clipCount(r.tracks)} clip(s)`),
      h('span', { class: 'muted' }, when(r.created_at)),
      restore,
    );
  });
  revisionList.replaceChildren(current, ...rows);
}
