import { announce, h, replace } from '../../lib/dom';
import type { GalleryActions } from './actions';
import type { GalleryState } from './state';
import { parseTags } from './types';

/**
 * The bars above the grid: a failed change ("notice"), the selection's bar
 * (how many, Star / unstar, Add tag, Delete, Clear selection: hidden without a
 * selection, so it is no tab stop then), the Undo bar of a delete waiting out
 * its window, and below the grid the key list every command contributes to.
 */

export function createBars(state: GalleryState, actions: GalleryActions, hooks: { focusTile(): void }) {
  const notice = h('div', { class: 'g-notice', role: 'alert', hidden: true });
  const count = h('strong', {});
  const tagInput = h('input', { type: 'text', 'aria-label': 'Tags to add to the selected items', placeholder: 'tag, tag', autocomplete: 'off', spellcheck: 'false', list: 'g-tags' });
  const bulk = h(
    'form',
    { class: 'g-bulk', 'aria-label': 'Selected items', hidden: true },
    count,
    h('button', { type: 'button', 'data-action': 'star' }, '★ Star / unstar'),
    h('span', { class: 'g-bulk-tag' }, tagInput, h('button', { type: 'submit', 'data-action': 'tag' }, 'Add tag')),
    h('button', { type: 'button', class: 'danger', 'data-action': 'delete' }, 'Delete'),
    h('button', { type: 'button', 'data-action': 'clear' }, 'Clear selection'),
  );
  const undoText = h('span', {});
  const undoButton = h('button', { type: 'button', 'data-action': 'undo' }, 'Undo');
  const undo = h('div', { class: 'g-undo', role: 'status', hidden: true }, undoText, undoButton);
  const keyList = h('dl', { class: 'g-keys' }, ...actions.commands.flatMap((c) => [h('dt', {}, h('kbd', {}, c.keys)), h('dd', {}, c.label)]));
  const keys = h('details', { class: 'g-keys-box' }, h('summary', {}, 'Keys'), keyList);
  const help = h(
    'p',
    { id: 'g-help', class: 'visually-hidden' },
    'Arrow keys move between items, Shift with an arrow selects, Home and End go to the first and the last loaded item. ' +
      actions.commands.map((c) => `${c.keys}: ${c.label}`).join('. ') + '.',
  );

  bulk.addEventListener('click', (event) => {
    const action = (event.target as HTMLElement).closest<HTMLElement>('button')?.dataset.action;
    if (action === 'star') void actions.star();
    else if (action === 'delete') actions.remove();
    else if (action === 'clear') {
      actions.clearSelection();
      hooks.focusTile();
    }
  });
  bulk.addEventListener('submit', (event) => {
    event.preventDefault();
    const tags = parseTags(tagInput.value);
    if (tags.length === 0) return tagInput.focus();
    void actions.addTags(tags).then(() => (tagInput.value = ''));
  });
  undoButton.addEventListener('click', () => {
    actions.undo();
    hooks.focusTile();
  });

  let noticeTimer = 0;
  /** A failure in words, above the grid for 10 s (and said to screen readers). */
  function problem(message: string): void {
    notice.hidden = false;
    replace(notice, message);
    announce(message);
    clearTimeout(noticeTimer);
    noticeTimer = window.setTimeout(() => (notice.hidden = true), 10_000);
  }

  function render(): void {
    const n = state.selected.size;
    bulk.hidden = n === 0;
    count.textContent = n === 1 ? '1 selected' : `${n.toLocaleString()} selected`;
    const pending = state.pendingDelete;
    undo.hidden = pending === null;
    if (pending) undoText.textContent = `Deleted ${pending.items.length === 1 ? '1 item' : `${pending.items.length} items`}. `;
  }

  return { notice, bulk, undo, keys, help, problem, render, focusTagInput: () => tagInput.focus() };
}
