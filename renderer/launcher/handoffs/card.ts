import { h } from '../../lib/dom';
import { when } from '../../lib/format';
import { studioName } from './facts';
import type { CardStatus, Facts } from './state';
import { thumbStrip } from './thumbs';
import type { Handoff } from '../../lib/api-types';
import { accessWords, alwaysLabel, requestTitle, stateWords } from './words';

/**
 * One request card (a view: it only reads what it is given). The buttons' names are part
 * of the page's contract (renderer/README.md "Launcher: requests and permissions"): "Allow and open",
 * "Allow once", "Always allow from <A> to <B>", "Decline". Each control carries
 * `data-focus`, so a rebuilt card gives the focus back to the same control.
 */

export interface CardActions {
  allowAndOpen(h: Handoff): void;
  allowOnce(h: Handoff): void;
  alwaysAllow(h: Handoff): void;
  decline(h: Handoff): void;
  /** Opens the recipient of a handoff this page allowed whose start failed. */
  openAgain(h: Handoff): void;
  dismiss(h: Handoff): void;
}

export function requestCard(ho: Handoff, status: CardStatus, facts: Facts | undefined, actions: CardActions): HTMLLIElement {
  const from = studioName(ho.from);
  const to = studioName(ho.to);
  const titleId = `request-${ho.id}-title`;
  const pending = ho.state === 'pending';
  const busy = status.busy !== null;
  const button = (label: string, focus: string, run: () => void, cls?: string) => {
    const b = h('button', { type: 'button', class: cls, 'data-focus': focus, disabled: busy }, label);
    b.addEventListener('click', run);
    return b;
  };
  const kinds = facts?.kinds ?? ho.asset_ids.map(() => null);
  return h(
    'li',
    { class: 'request', 'data-handoff': ho.id, 'data-state': ho.state, 'aria-labelledby': titleId, 'aria-busy': busy ? 'true' : null, tabindex: -1 },
    h('h3', { id: titleId, class: 'request-title' }, requestTitle(from, to, facts?.title ?? null)),
    thumbStrip(ho.id, ho.asset_ids, from),
    // A note that only repeats the item's title (already in the heading) is not said twice.
    ho.note && ho.note !== facts?.title ? h('blockquote', { class: 'request-note' }, h('span', { class: 'visually-hidden' }, `${from}’s note: `), ho.note) : null,
    h('p', { class: 'request-access' }, accessWords({ from, to, kinds, session: ho.session_id ? { name: ho.session_name } : null })),
    h(
      'p',
      { class: 'request-meta muted' },
      'Asked ',
      h('time', { datetime: ho.created_at }, when(ho.created_at)),
      pending ? null : ` · now ${stateWords(ho.state, from)}`,
    ),
    pending
      ? h(
          'div',
          { class: 'actions request-actions' },
          button('Allow and open', 'open', () => actions.allowAndOpen(ho), 'primary'),
          button('Allow once', 'once', () => actions.allowOnce(ho)),
          button(alwaysLabel(from, to), 'always', () => actions.alwaysAllow(ho)),
          button('Decline', 'decline', () => actions.decline(ho), 'danger'),
        )
      : null,
    status.progress ? h('p', { class: 'request-progress', role: 'status' }, status.progress) : null,
    status.link
      ? h(
          'p',
          { class: 'request-link' },
          'Your browser did not open a new tab. ',
          h('a', { href: status.link, target: '_blank', rel: 'noopener', 'data-focus': 'link' }, `Open ${to}`),
        )
      : null,
    status.error
      ? h(
          'div',
          { class: 'field-error request-error', role: 'alert' },
          h('span', {}, status.error.text),
          h('span', { class: 'error-code' }, status.error.code),
        )
      : null,
    !pending && !busy
      ? h(
          'div',
          { class: 'actions' },
          status.retryOpen && ho.state === 'approved' ? button(`Open ${to}`, 'again', () => actions.openAgain(ho), 'primary') : null,
          button('Dismiss', 'dismiss', () => actions.dismiss(ho)),
        )
      : null,
  );
}
