import { h, replace } from '../../lib/dom';
import { when } from '../../lib/format';
import type { Job } from '../../lib/job';
import { openMedia } from '../../lib/media';
import { setPreset } from '../actions/document';
import { cancelExport, FINISHED, startExport } from '../actions/exports';
import { clipName, view } from '../read';
import type { Plan, Preset } from '../types';

const PRESETS: { value: Preset; label: string }[] = [
  { value: 'auto', label: 'Auto: copy when every clip can be copied, else encode' },
  { value: 'copy', label: 'Copy: lossless, refused unless every clip can be copied' },
  { value: 'h264', label: 'H.264: encode every clip' },
];

const presetSelect = h('select', { id: 'preset' }, ...PRESETS.map((p) => h('option', { value: p.value }, p.label)));
const planView = h('div', { class: 'plan', 'aria-live': 'polite' });
const exportButton = h('button', { type: 'button', class: 'primary' }, 'Export');
const exportList = h('ul', { class: 'exports', 'aria-label': 'Exports of this sequence, newest first' });

export const exportPanel = h(
  'section',
  { class: 'panel', 'aria-labelledby': 'export-title' },
  h('h3', { id: 'export-title' }, 'Export'),
  h('div', { class: 'row' }, h('label', { for: 'preset' }, 'Preset'), presetSelect, exportButton),
  planView,
  h('h4', {}, 'Exports'),
  exportList,
);

export function drawPlan(): void {
  if (view.planBusy) planView.setAttribute('aria-busy', 'true');
  else planView.removeAttribute('aria-busy');
  const shown = view.plan;
  if (!shown) return;
  if (shown.kind === 'refused') {
    replace(
      planView,
      h('p', { class: 'plan-path plan-refused' }, shown.unfit ? 'This preset cannot export the sequence as it is:' : shown.text),
      shown.reasons.length ? h('ul', { class: 'reasons' }, ...shown.reasons.map((r) => h('li', {}, r))) : shown.unfit ? h('p', {}, shown.text) : null,
    );
    return;
  }
  drawPlanTable(shown.plan);
}

function drawPlanTable(plan: Plan): void {
  const headline =
    plan.path === 'copy'
      ? 'Plan: copy (lossless). Every clip is joined as it is, without encoding.'
      : 'Plan: conform (encode). The picture is encoded once to H.264 at the target size and rate.';
  const rows = plan.clips.map((c) =>
    h(
      'tr',
      {},
      h('td', {}, `${c.track} #${c.index + 1}`),
      h('td', {}, clipName({ asset_id: c.asset_id })),
      h('td', {}, h('span', { class: `path path-${c.path}` }, c.path)),
      h('td', { class: 'reason' }, c.reason ?? 'Can be copied as it is.'),
    ),
  );
  replace(
    planView,
    h('p', { class: `plan-path plan-${plan.path}` }, headline),
    plan.clips.length
      ? h(
          'table',
          { class: 'plan-clips' },
          h('caption', { class: 'visually-hidden' }, 'Each video clip, copied or encoded, and why'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Clip'), h('th', { scope: 'col' }, 'Asset'), h('th', { scope: 'col' }, 'Path'), h('th', { scope: 'col' }, 'Reason'))),
          h('tbody', {}, ...rows),
        )
      : null,
  );
}

function exportBar(job: Job): HTMLElement | null {
  if (FINISHED.has(job.state)) return null;
  if (job.progress_den <= 0) return h('div', { class: 'bar indeterminate', role: 'progressbar', 'aria-label': `${job.title}: in progress` }, h('span'));
  const pct = Math.min(100, Math.round((job.progress_num / job.progress_den) * 100));
  const fill = h('span');
  fill.style.width = `${pct}%`;
  return h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct, 'aria-valuetext': `${pct}%`, 'aria-label': `${job.title}: export progress` }, fill);
}

export function drawExports(): void {
  const tl = view.tl;
  if (!tl) return;
  const list = [...view.exportJobs.values()].filter((j) => j.timeline_id === tl.id).sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
  const running = list.some((j) => !FINISHED.has(j.state));
  exportButton.disabled = running || view.exportStarting;
  if (list.length === 0) {
    replace(exportList, h('li', { class: 'empty muted' }, 'No export yet.'));
    return;
  }
  const focusedJob = document.activeElement instanceof HTMLElement && exportList.contains(document.activeElement) ? document.activeElement.closest<HTMLElement>('[data-job]')?.dataset.job : null;
  const rows = list.slice(0, 20).map((job) => {
    const finished = FINISHED.has(job.state);
    const asked = view.cancelling.has(job.id) || job.cancel_requested_at !== null;
    let cancel: HTMLButtonElement | null = null;
    if (!finished) {
      cancel = h('button', { type: 'button', disabled: asked, 'aria-label': `Cancel ${job.title}`, 'data-focus': 'cancel' }, asked ? 'Cancelling…' : 'Cancel');
      cancel.addEventListener('click', () => void cancelExport(job));
    }
    const pct = job.progress_den > 0 ? Math.min(100, Math.round((job.progress_num / job.progress_den) * 100)) : null;
    return h(
      'li',
      { class: 'export', 'data-job': job.id, 'data-state': job.state, tabindex: -1 },
      h('div', { class: 'export-head' }, h('strong', {}, job.title), h('span', { class: 'muted' }, when(job.created_at))),
      exportBar(job),
      h(
        'div',
        { class: 'export-meta' },
        h('span', { class: `state state-${job.state}` }, asked && !finished ? 'cancelling' : job.state),
        !finished && pct !== null ? h('span', { class: 'muted' }, `${pct}%`) : null,
        job.state === 'succeeded' && job.data?.item_id ? h('a', { href: `/#gallery/${job.data.item_id}`, class: 'gallery-link', target: '_blank', rel: 'noopener' }, 'Open in the gallery') : null,
        job.state === 'succeeded' && job.data?.asset_id ? playLink(job.data.asset_id) : null,
        job.last_error ? h('span', { class: 'error' }, job.last_error) : null,
        cancel,
      ),
    );
  });
  exportList.replaceChildren(...rows);
  if (focusedJob) {
    const row = exportList.querySelector<HTMLElement>(`[data-job="${focusedJob}"]`);
    const button = row?.querySelector<HTMLButtonElement>('[data-focus="cancel"]');
    if (button && !button.disabled) button.focus();
    else row?.focus();
  }
}

/** The exported file, opened in a new tab through a fresh media URL. */
function playLink(assetId: string): HTMLElement {
  const a = h('a', { href: '#', 'data-media': assetId }, 'Play the file');
  a.addEventListener('click', (e) => {
    e.preventDefault();
    openMedia(assetId);
  });
  return a;
}

export function wireExport(): void {
  presetSelect.addEventListener('change', () => setPreset(presetSelect.value as Preset));
  exportButton.addEventListener('click', () => void startExport());
}
