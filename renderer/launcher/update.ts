import { ApiFailure, call } from '../lib/api';
import { announce, h, replace } from '../lib/dom';

/**
 * The update dialog: a studio is updated from a folder (its last source by
 * default). When the new version asks for capabilities the installed one lacks,
 * the service answers 409 `approval_required` with them
 * (`details.approval.capabilities`): the dialog lists them and updates only
 * when the person approves (`"approve": true`), never on its own.
 */

export interface UpdatableStudio {
  id: string;
  name: string;
  version: string;
  source: string;
  linked: boolean;
}

interface Bridge {
  pickFolder(): Promise<string | null>;
}

/** What a capability lets a studio do, in words (docs/api.md §Capabilities). */
const MEANING: Record<string, string> = {
  kv: 'keep documents',
  'kv.shared': 'read and write documents shared between studios',
  records: 'keep records',
  gallery: 'add to and read its gallery',
  'gallery.read_all': "read every studio's gallery",
  assets: 'store files',
  jobs: 'run jobs',
  timeline: 'edit sequences and export video',
};

export function capabilityText(cap: string): string {
  return MEANING[cap] ? `${cap}: ${MEANING[cap]}` : cap;
}

export function confirmUpdate(s: UpdatableStudio, onError: (err: unknown) => void): void {
  const field = h('input', { id: 'update-source', type: 'text', value: s.source, autocomplete: 'off', spellcheck: 'false', required: true });
  const bridge = (window as unknown as { backlot?: Bridge }).backlot;
  const browse = bridge ? h('button', { type: 'button' }, 'Choose folder…') : null;
  browse?.addEventListener('click', async () => {
    const path = await bridge!.pickFolder();
    if (path) field.value = path;
  });
  const approval = h('div', { class: 'approval', hidden: true, role: 'group', 'aria-labelledby': 'approval-title' });
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const dialog = h(
    'dialog',
    { class: 'confirm', 'aria-labelledby': 'update-title' },
    h('h2', { id: 'update-title' }, `Update ${s.name}`),
    h(
      'p',
      {},
      `Installed: version ${s.version}. ${s.linked ? 'It is linked: the new folder is used in place.' : 'The folder is copied; the installed version keeps running until the new one is ready.'}`,
    ),
    h('label', { for: 'update-source' }, 'Update from the folder'),
    h('div', { class: 'row' }, field, browse),
    approval,
    problem,
  );
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const go = h('button', { type: 'button', class: 'primary' }, 'Update');
  let approve = false;
  cancel.addEventListener('click', () => dialog.close());
  go.addEventListener('click', async () => {
    go.disabled = true;
    problem.hidden = true;
    try {
      await call(`/launcher/studios/${s.id}:update`, { method: 'POST', body: { source: field.value.trim(), ...(approve ? { approve: true } : {}) } });
      dialog.close();
      announce(`Updating ${s.name}`);
    } catch (err) {
      const caps = err instanceof ApiFailure && err.code === 'approval_required' ? approvalOf(err) : null;
      if (caps && !approve) {
        approve = true;
        replace(
          approval,
          h('h3', { id: 'approval-title' }, 'The new version asks for more'),
          h('p', {}, `${s.name} will be able to:`),
          h('ul', { class: 'caps' }, ...caps.map((c) => h('li', {}, capabilityText(c)))),
          h('p', { class: 'muted' }, 'Update only if you trust this version with these.'),
        );
        approval.hidden = false;
        field.readOnly = true;
        go.textContent = 'Approve and update';
        go.focus();
      } else if (err instanceof ApiFailure) {
        problem.textContent = `${err.message} (${err.code})`;
        problem.hidden = false;
      } else {
        onError(err);
      }
    } finally {
      go.disabled = false;
    }
  });
  dialog.append(h('div', { class: 'actions' }, cancel, go));
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  field.focus();
}

function approvalOf(err: ApiFailure): string[] | null {
  const approval = err.details.approval as { capabilities?: unknown } | undefined;
  const caps = approval?.capabilities;
  return Array.isArray(caps) && caps.every((c) => typeof c === 'string') ? (caps as string[]) : null;
}
