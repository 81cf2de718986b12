import { ApiFailure, call, query, type Page } from '../../lib/api';
import { announce, h, replace } from '../../lib/dom';
import { when } from '../../lib/format';
import { studioName } from './facts';
import type { HandoffRule } from '../../lib/api-types';

/**
 * The Permissions view: the standing rules ("Always allow from A to B"), each with
 * Revoke (`DELETE /launcher/handoff-rules/{from}/{to}`). Read at start, on every
 * reconnect and after an "Always allow"; rules change only by the person's hand, so the
 * view is drawn when they do.
 */

export function createPermissions() {
  const heading = h('h2', { id: 'permissions-title', tabindex: -1 }, 'Permissions');
  const list = h('ul', { class: 'rules', 'aria-labelledby': 'permissions-title' });
  const note = h('p', { class: 'muted small' }, 'Handoffs between these studios are allowed without asking you. Revoke one to be asked again.');
  const element = h('section', { class: 'panel permissions-panel', id: 'permissions', 'aria-labelledby': 'permissions-title' }, heading, note, list);
  let rules: HandoffRule[] = [];
  let failure: string | null = null;
  let reading: Promise<void> | null = null;
  let again = false;

  const keyOf = (r: HandoffRule) => `${r.from}/${r.to}`;

  /** Reads every rule (a few pages at most: one per pair of studios). One read at a time; a call meanwhile reads once more. */
  function load(): Promise<void> {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      const all: HandoffRule[] = [];
      let cursor: string | null = null;
      try {
        do {
          const page: Page<HandoffRule> = await call<Page<HandoffRule>>(`/launcher/handoff-rules${query({ limit: 200, cursor })}`);
          all.push(...page.items);
          cursor = page.next_cursor;
        } while (cursor);
        rules = all;
        failure = null;
      } catch (err) {
        failure = err instanceof ApiFailure ? err.message : String(err);
      }
      render();
    })().finally(() => {
      reading = null;
      if (again) {
        again = false;
        void load();
      }
    });
    return reading;
  }

  /** The names the rows were drawn with: a studio change that renames none of them draws nothing. */
  let drawnNames = '';
  const namesNow = () => rules.map((r) => `${studioName(r.from)}\n${studioName(r.to)}`).join('\n');

  function studiosChanged(): void {
    if (namesNow() !== drawnNames) render();
  }

  /** The rule whose Revoke has the focus: it keeps it when the list is drawn again. */
  function focusedRule(): string | undefined {
    const active = document.activeElement;
    return active instanceof HTMLElement && list.contains(active) ? active.closest<HTMLElement>('li.rule')?.dataset.rule : undefined;
  }

  function render(focusKey = focusedRule()): void {
    drawnNames = namesNow();
    note.hidden = rules.length === 0;
    if (failure) {
      replace(list, h('li', { class: 'error' }, `The permissions could not be read: ${failure}`));
      return;
    }
    if (rules.length === 0) {
      replace(list, h('li', { class: 'empty' }, 'No standing permissions. Every handoff between studios waits for your answer under Requests; choose “Always allow” on one to stop being asked for that pair.'));
      return;
    }
    replace(list, ...rules.map(row));
    if (focusKey) list.querySelector<HTMLElement>(`li[data-rule="${CSS.escape(focusKey)}"] button`)?.focus();
  }

  function row(r: HandoffRule): HTMLLIElement {
    const from = studioName(r.from);
    const to = studioName(r.to);
    const revoke = h('button', { type: 'button', 'aria-label': `Revoke: ${from} to ${to}` }, 'Revoke');
    const error = h('span', { class: 'error', role: 'alert' });
    revoke.addEventListener('click', () => void remove(r, revoke, error));
    return h(
      'li',
      { class: 'rule', 'data-rule': keyOf(r) },
      h('span', { class: 'rule-text' }, h('strong', {}, `${from} → ${to}`), ', always allowed since ', h('time', { datetime: r.created_at }, when(r.created_at))),
      revoke,
      error,
    );
  }

  async function remove(r: HandoffRule, button: HTMLButtonElement, error: HTMLElement): Promise<void> {
    button.disabled = true;
    error.textContent = '';
    try {
      await call(`/launcher/handoff-rules/${encodeURIComponent(r.from)}/${encodeURIComponent(r.to)}`, { method: 'DELETE' });
    } catch (err) {
      // Already gone is what was asked for.
      if (!(err instanceof ApiFailure && err.status === 404)) {
        button.disabled = false;
        error.textContent = ` ${err instanceof ApiFailure ? err.message : String(err)}`;
        return;
      }
    }
    const at = rules.findIndex((x) => keyOf(x) === keyOf(r));
    rules = rules.filter((x) => keyOf(x) !== keyOf(r));
    const next = rules[Math.min(at, rules.length - 1)];
    render(next ? keyOf(next) : undefined);
    if (!next) heading.focus();
    announce(`Revoked: ${studioName(r.from)} must ask again to send to ${studioName(r.to)}.`);
  }

  return { element, load, studiosChanged };
}
