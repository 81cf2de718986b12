import { ApiFailure, call } from '../lib/api';
import { announce, h, replace } from '../lib/dom';
import { bytes } from '../lib/format';

/**
 * The Disk panel (renderer/README.md "Launcher: jobs and disk"): what the stored assets take
 * (`GET /launcher/disk`), in all and per studio, and what reclaim would free
 * (`POST /launcher/assets:reclaim` without `confirm`: the preview, nothing
 * changes). **Reclaim…** opens a dialog that lists exactly what goes (the
 * assets, the deleted gallery items that go with them, the bytes), and only
 * its confirm sends the preview back; then the panel says what was freed.
 * If the set changed in between (409 `preview_changed`), the dialog shows the
 * new set and asks again: nothing is reclaimed that was not shown.
 */

interface UsagePart {
  count: number;
  bytes: number;
}

interface Usage {
  assets: UsagePart & { pinned: UsagePart; unread: UsagePart; studios: (UsagePart & { studio_id: string })[] };
}

interface Preview {
  preview: string;
  assets: string[];
  items: string[];
  bytes: number;
}

interface Result {
  reclaimed: string[];
  bytes_freed: number;
}

/** Ids listed in the dialog at most (the count and bytes are always whole). */
const LIST_MAX = 200;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export class DiskPanel {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'disk-body', 'aria-live': 'polite' });
  private readonly result = h('p', { class: 'disk-result', role: 'status' });
  private readonly problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  private readonly reclaim: HTMLButtonElement;
  private preview: Preview | null = null;
  private loading: Promise<void> | null = null;

  constructor() {
    const refresh = h('button', { type: 'button' }, 'Refresh');
    refresh.addEventListener('click', () => void this.load());
    this.reclaim = h('button', { type: 'button', class: 'danger', disabled: true }, 'Reclaim…');
    this.reclaim.addEventListener('click', () => this.confirm());
    this.element = h(
      'section',
      { class: 'panel disk', 'aria-labelledby': 'disk-title' },
      h('div', { class: 'panel-head' }, h('h2', { id: 'disk-title' }, 'Disk'), h('div', { class: 'actions' }, refresh, this.reclaim)),
      this.problem,
      this.body,
      this.result,
    );
    replace(this.body, h('p', { class: 'muted' }, 'Reading…'));
  }

  /** Reads the usage and the reclaim preview (again). */
  load(): Promise<void> {
    this.loading ??= this.read().finally(() => (this.loading = null));
    return this.loading;
  }

  private async read(): Promise<void> {
    try {
      const [usage, preview] = await Promise.all([
        call<Usage>('/launcher/disk'),
        call<Preview>('/launcher/assets:reclaim', { method: 'POST', body: {} }),
      ]);
      this.problem.hidden = true;
      this.preview = preview;
      this.render(usage, preview);
    } catch (err) {
      this.problem.hidden = false;
      this.problem.textContent = err instanceof ApiFailure ? `${err.message} (${err.code})` : String(err);
    }
  }

  private render(usage: Usage, preview: Preview): void {
    const a = usage.assets;
    const rows = a.studios.map((s) =>
      h('tr', { 'data-studio': s.studio_id }, h('th', { scope: 'row' }, s.studio_id), h('td', {}, plural(s.count, 'asset')), h('td', {}, bytes(s.bytes))),
    );
    if (a.unread.count > 0) {
      rows.push(
        h('tr', { 'data-studio': '' }, h('th', { scope: 'row' }, h('em', {}, 'no studio (purged)')), h('td', {}, plural(a.unread.count, 'asset')), h('td', {}, bytes(a.unread.bytes))),
      );
    }
    replace(
      this.body,
      h(
        'p',
        { class: 'disk-total' },
        h('strong', { 'data-total-bytes': a.bytes }, bytes(a.bytes)),
        ` in ${plural(a.count, 'stored asset')}`,
        a.pinned.count > 0 ? h('span', { class: 'muted' }, ` (${bytes(a.pinned.bytes)} pinned, never reclaimed)`) : null,
      ),
      rows.length > 0
        ? h(
            'table',
            { class: 'disk-table' },
            h('caption', { class: 'visually-hidden' }, 'Assets each studio can read (an asset two studios share counts in both)'),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Studio'), h('th', { scope: 'col' }, 'Assets'), h('th', { scope: 'col' }, 'Size'))),
            h('tbody', {}, ...rows),
          )
        : h('p', { class: 'muted' }, 'No studio has stored anything yet.'),
      h(
        'p',
        { class: 'reclaimable', 'data-reclaimable-bytes': preview.bytes },
        preview.assets.length === 0
          ? a.count === 0
            ? 'Nothing to reclaim.'
            : 'Nothing to reclaim: assets a gallery item or a sequence uses, pinned ones, and ones nothing has used yet are kept.'
          : `Reclaimable: ${bytes(preview.bytes)} in ${plural(preview.assets.length, 'asset')} nothing uses any more.`,
      ),
    );
    this.reclaim.disabled = preview.assets.length === 0;
  }

  private confirm(): void {
    const preview = this.preview;
    if (!preview || preview.assets.length === 0) return;
    const invoker = this.reclaim;
    const content = h('div', { class: 'reclaim-list' });
    const dialog = h('dialog', { class: 'confirm reclaim', 'aria-labelledby': 'reclaim-title' }, h('h2', { id: 'reclaim-title' }, 'Reclaim disk space?'), content);
    let current = preview;
    const show = (p: Preview, note: string | null) => {
      current = p;
      const ids = p.assets.slice(0, LIST_MAX);
      replace(
        content,
        note ? h('p', { class: 'problem', role: 'alert' }, note) : null,
        h(
          'p',
          {},
          `${bytes(p.bytes)} are freed: the files of ${plural(p.assets.length, 'asset')} no gallery item, item input or sequence uses any more`,
          p.items.length > 0 ? `, and ${plural(p.items.length, 'deleted gallery item')} holding them go for good` : '',
          '. Studios that had them get 410 for them afterwards; this cannot be undone.',
        ),
        h('ul', { class: 'ids', 'aria-label': 'Assets that go' }, ...ids.map((id) => h('li', {}, h('code', {}, id)))),
        p.assets.length > LIST_MAX ? h('p', { class: 'muted' }, `and ${p.assets.length - LIST_MAX} more`) : null,
      );
    };
    show(preview, null);
    const keep = h('button', { type: 'button', autofocus: true }, 'Keep them');
    const go = h('button', { type: 'button', class: 'danger' }, 'Reclaim');
    keep.addEventListener('click', () => dialog.close());
    go.addEventListener('click', async () => {
      go.disabled = true;
      try {
        const r = await call<Result>('/launcher/assets:reclaim', { method: 'POST', body: { confirm: current.preview } });
        dialog.close();
        this.result.textContent = `Reclaimed ${plural(r.reclaimed.length, 'asset')}: ${bytes(r.bytes_freed)} freed.`;
        this.result.dataset.freed = String(r.bytes_freed);
        announce(this.result.textContent);
        await this.load();
      } catch (err) {
        if (err instanceof ApiFailure && err.code === 'preview_changed') {
          const d = err.details as unknown as Preview;
          if (d.assets.length === 0) {
            dialog.close();
            this.result.textContent = 'Nothing to reclaim any more: the assets are in use again.';
            await this.load();
            return;
          }
          show(d, 'What can be reclaimed changed since the preview. This is the set now: confirm again to reclaim it.');
        } else {
          show(current, err instanceof ApiFailure ? `${err.message} (${err.code})` : String(err));
        }
      } finally {
        go.disabled = false;
      }
    });
    dialog.append(h('div', { class: 'actions' }, keep, go));
    dialog.addEventListener('close', () => {
      dialog.remove();
      invoker.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
  }
}
