import { ApiFailure, call } from '../lib/api';
import { announce, h, replace } from '../lib/dom';
import { pathAdvice, type ExampleRef } from './path-advice';
import { onStudiosChanged, studioById } from './studios';

/**
 * Installing: the folder field (with Browse in the desktop app, where
 * `window.backlot.pickFolder` opens the system's folder picker), and the
 * Examples list (`GET /launcher/examples`: the example studios that ship
 * with Backlot, each installed from its shipped folder with one click).
 *
 * A refused install is told next to what caused it (the field, or the
 * example's Install button), in words, with the code in a small details line;
 * never in the page's banner.
 */

interface Example extends ExampleRef {
  version: string;
  description: string | null;
  needs: string[];
  heavy: boolean;
}

interface BacklotBridge {
  pickFolder(): Promise<string | null>;
}

let examples: Example[] = [];
const examplesList = h('ul', { class: 'examples-list', 'aria-labelledby': 'examples-title' });
const examplesPanel = h(
  'section',
  { class: 'examples', 'aria-labelledby': 'examples-title' },
  h('h3', { id: 'examples-title' }, 'Examples'),
  h('p', { class: 'muted small' }, 'Studios that come with Backlot, to try first.'),
  examplesList,
);
/** An example's last refusal, shown under it until the next try. */
const exampleErrors = new Map<string, ApiFailure | Error>();
/** Examples whose install was sent and whose studio has not shown up yet. */
const sending = new Set<string>();

/** A refusal in words, and its code on a details line. */
function errorLines(err: unknown): HTMLElement[] {
  if (err instanceof ApiFailure) {
    return [h('span', { class: 'error-text' }, err.message), h('span', { class: 'error-code muted' }, `Details: ${err.code}${err.status ? `, HTTP ${err.status}` : ''}`)];
  }
  return [h('span', { class: 'error-text' }, err instanceof Error ? err.message : String(err))];
}

async function installExample(e: Example, button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  exampleErrors.delete(e.id);
  sending.add(e.id);
  renderExamples();
  try {
    await call('/launcher/studios:install', { method: 'POST', body: { source: e.source } });
    announce(`Installing ${e.name}`);
  } catch (err) {
    exampleErrors.set(e.id, err as Error);
    sending.delete(e.id);
  }
  renderExamples();
}

function exampleRow(e: Example): HTMLLIElement {
  const s = studioById(e.id);
  if (s) sending.delete(e.id);
  let status: HTMLElement;
  if (!s && !sending.has(e.id)) {
    const install = h('button', { type: 'button', class: 'primary', 'data-focus': `example-${e.id}`, 'aria-label': `Install ${e.name}` }, 'Install');
    install.addEventListener('click', () => void installExample(e, install));
    status = install;
  } else if (!s || s.state === 'installing') {
    status = h('span', { class: 'muted', 'data-example-state': 'installing' }, 'Installing…');
  } else if (s.state === 'running') {
    status = h('a', { class: 'button', href: `${s.origin}/`, target: '_blank', rel: 'noopener', 'data-example-state': 'running' }, `Open ${e.name}`);
  } else if (s.installed) {
    status = h('span', { class: 'installed', 'data-example-state': 'installed' }, 'Installed ✓');
  } else {
    status = h('span', { class: 'muted', 'data-example-state': s.state }, `Not installed (${s.state}): see its card above`);
  }
  const err = exampleErrors.get(e.id);
  return h(
    'li',
    { class: 'example', 'data-example': e.id },
    h(
      'div',
      { class: 'example-text' },
      h('strong', {}, e.name),
      h('span', { class: 'muted' }, ` ${e.version}`),
      e.description ? h('p', { class: 'small' }, e.description) : null,
      h(
        'p',
        { class: 'small muted', 'data-needs': e.needs.join(',') },
        e.needs.length > 0 ? `Needs ${e.needs.join(', ')}.` : 'Needs nothing else.',
        e.heavy ? ' Heavy: it runs alone among heavy studios.' : '',
      ),
      err ? h('p', { class: 'field-error', role: 'alert' }, ...errorLines(err)) : null,
    ),
    status,
  );
}

function renderExamples(): void {
  examplesPanel.hidden = examples.length === 0;
  replace(examplesList, ...examples.map(exampleRow));
}

/** The Examples section; it reads the list once and follows the studios' states. */
export function examplesSection(): HTMLElement {
  examplesPanel.hidden = true;
  onStudiosChanged(renderExamples);
  call<{ items: Example[] }>('/launcher/examples').then(
    (r) => {
      examples = r.items;
      renderExamples();
    },
    () => undefined, // no examples shipped or readable: the section stays hidden
  );
  return examplesPanel;
}

export function installForm(): HTMLFormElement {
  const field = h('input', {
    id: 'source',
    name: 'source',
    type: 'text',
    placeholder: '/full/path/to/a/studio folder',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'source-hint',
  });
  const hint = h('p', { class: 'hint muted small', id: 'source-hint' }, 'The folder that holds its backlot.json, as a full path.');
  const error = h('div', { class: 'field-error', id: 'source-error', role: 'alert', hidden: true });
  const install = h('button', { type: 'submit', class: 'primary' }, 'Install');
  const bridge = (window as unknown as { backlot?: BacklotBridge }).backlot;
  const browse = bridge ? h('button', { type: 'button', 'data-browse': '' }, 'Browse…') : null;
  browse?.addEventListener('click', async () => {
    const path = await bridge!.pickFolder();
    if (path) {
      field.value = path;
      clearError();
      field.focus();
    }
  });
  /** An answer under the field: a refusal, or (`offer`) an example to install instead. */
  const showError = (...lines: (HTMLElement | string)[]): void => {
    error.dataset.tone = lines.some((l) => l instanceof HTMLButtonElement) ? 'offer' : 'error';
    replace(error, ...lines);
    error.hidden = false;
    field.setAttribute('aria-invalid', 'true');
    field.setAttribute('aria-describedby', 'source-error source-hint');
  };
  const clearError = (): void => {
    error.hidden = true;
    error.replaceChildren();
    field.removeAttribute('aria-invalid');
    field.setAttribute('aria-describedby', 'source-hint');
  };
  field.addEventListener('input', clearError);
  const form = h(
    'form',
    { class: 'install', novalidate: true },
    h('label', { for: 'source', id: 'install-title' }, 'Install a studio from a folder'),
    h('div', { class: 'row' }, field, browse, install),
    error,
    hint,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const source = field.value.trim();
    if (source === '') {
      showError(h('span', { class: 'error-text' }, 'Type the full path of a studio folder first.'));
      field.focus();
      return;
    }
    const advice = pathAdvice(source, examples);
    if (advice.kind === 'relative') {
      showError(h('span', { class: 'error-text' }, advice.message));
      field.focus();
      return;
    }
    if (advice.kind === 'example') {
      const e = examples.find((x) => x.id === advice.example.id)!;
      const offer = h('button', { type: 'button', class: 'primary', 'data-focus': 'offer' }, `Install the ${e.name} example`);
      offer.addEventListener('click', () => {
        field.value = e.source;
        clearError();
        form.requestSubmit();
      });
      showError(h('span', { class: 'error-text' }, advice.message), offer);
      return;
    }
    install.disabled = true;
    call('/launcher/studios:install', { method: 'POST', body: { source } })
      .then(() => {
        announce('Installing');
        field.value = '';
        clearError();
      })
      .catch((err: unknown) => {
        showError(...errorLines(err));
        field.focus();
      })
      .finally(() => (install.disabled = false));
  });
  return form;
}
