import { h, replace } from '../../lib/dom';
import { when } from '../../lib/format';
import type { Job } from '../../lib/api-types';
import { mediaUrl, openMedia } from '../../lib/media';
import { setPreset } from '../actions/document';
import { cancelExport, exportFileName, FINISHED, startExport } from '../actions/exports';
import { clipName, frames, tc, view } from '../read';
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
  h('div', { class: 'row' }, h('label', { for: 'preset' }, 'Preset'), presetSelect),
  planView,
  h('h4', {}, 'Exports'),
  exportList,
);

/**
 * The export bar, stuck to the bottom of the window so that it is always in
 * view (at 1280×800 the panels reach below the fold): the file name (the
 * sequence's name until edited; editable until an export runs), Export, and
 * the newest export of this sequence: its progress as the service reports it,
 * Cancel, and once done its file name, a link to its gallery item in the
 * launcher (a new tab; the launcher window in the desktop shell) and Download
 * under that name.
 */
const nameInput = h('input', { type: 'text', id: 'export-name', class: 'export-name', autocomplete: 'off', spellcheck: 'false' });
const barStatus = h('div', { class: 'bar-status', role: 'status' });
export const exportBarEl = h(
  'section',
  { class: 'export-bar', 'aria-label': 'Export this sequence' },
  h('label', { for: 'export-name' }, 'File name'),
  nameInput,
  exportButton,
  barStatus,
);
/** The sequence the name field shows a name for; a new one resets the field. */
let nameFor: string | null = null;
let nameEdited = false;

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

/** Rows of the plan shown before "Show all". */
const PLAN_ROWS = 50;
let planAll = false;
/** The sequence the plan's "Show all" was asked for; another one starts short again. */
let planFor: string | null = null;

function moreButton(more: number): HTMLElement {
  const b = h('button', { type: 'button', class: 'plan-more' }, `Show the other ${more} clips`);
  b.addEventListener('click', () => {
    planAll = true;
    drawPlan();
  });
  return b;
}

function drawPlanTable(plan: Plan): void {
  if (planFor !== view.tl?.id) {
    planFor = view.tl?.id ?? null;
    planAll = false;
  }
  const headline =
    plan.path === 'copy'
      ? 'Plan: copy (lossless). Every clip is joined as it is, without encoding.'
      : 'Plan: conform (encode). The picture is encoded once to H.264 at the target size and rate.';
  // A long sequence lists its first clips; the rest on request (each row is five elements).
  const shown = planAll || plan.clips.length <= PLAN_ROWS ? plan.clips : plan.clips.slice(0, PLAN_ROWS);
  const rows = shown.map((c) =>
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
    shown.length < plan.clips.length ? moreButton(plan.clips.length - shown.length) : null,
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
  drawBar(list[0] ?? null, running);
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
    const itemId = typeof job.data.item_id === 'string' ? job.data.item_id : null;
    const assetId = typeof job.data.asset_id === 'string' ? job.data.asset_id : null;
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
        job.state === 'succeeded' && itemId ? h('a', { href: `/#gallery/${itemId}`, class: 'gallery-link', target: '_blank', rel: 'noopener' }, 'Open in the gallery') : null,
        job.state === 'succeeded' && assetId ? playLink(assetId) : null,
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

function drawBar(job: Job | null, running: boolean): void {
  const tl = view.tl!;
  if (nameFor !== tl.id) {
    nameFor = tl.id;
    nameEdited = false;
  }
  if (!nameEdited && document.activeElement !== nameInput) nameInput.value = exportFileName(tl.name);
  nameInput.disabled = running || view.exportStarting;
  if (!job) {
    replace(barStatus, h('span', { class: 'muted' }, 'Not exported yet.'));
    return;
  }
  barStatus.dataset.job = job.id;
  barStatus.dataset.state = job.state;
  const asked = view.cancelling.has(job.id) || job.cancel_requested_at !== null;
  if (!FINISHED.has(job.state)) {
    const pct = job.progress_den > 0 ? Math.min(100, Math.floor((job.progress_num / job.progress_den) * 100)) : null;
    const fps = view.tl!.target.fps;
    const done = pct === null ? 'Starting…' : `${pct}% · ${tc(frames(job.progress_num / 1000))} of ${tc(Math.round((job.progress_den / 1000) * fps))}`;
    const cancel = h('button', { type: 'button', disabled: asked, 'aria-label': `Cancel ${job.title}` }, asked ? 'Cancelling…' : 'Cancel');
    cancel.addEventListener('click', () => void cancelExport(job));
    replace(barStatus, exportProgress(job), h('span', { class: 'bar-text' }, asked ? 'Cancelling…' : done), cancel);
    return;
  }
  const name = view.exportNames.get(job.id) ?? exportFileName(tl.name);
  const itemId = typeof job.data.item_id === 'string' ? job.data.item_id : null;
  const assetId = typeof job.data.asset_id === 'string' ? job.data.asset_id : null;
  if (job.state !== 'succeeded' || !assetId) {
    replace(barStatus, h('span', { class: job.state === 'failed' ? 'error' : 'muted' }, job.state === 'failed' ? `Export failed: ${job.last_error ?? 'no reason given'}` : `Export ${job.state}.`));
    return;
  }
  replace(
    barStatus,
    h('span', { class: 'bar-done' }, 'Exported ', h('strong', { class: 'bar-name' }, name)),
    itemId ? h('a', { href: `/#gallery/${itemId}`, target: '_blank', rel: 'noopener', class: 'launcher-link' }, 'Show in launcher') : null,
    downloadLink(assetId, name),
  );
}

/** The bar's progress: a determinate bar once the service gives a total (steady: progress_num is the picture written). */
function exportProgress(job: Job): HTMLElement {
  if (job.progress_den <= 0) return h('div', { class: 'bar indeterminate', role: 'progressbar', 'aria-label': 'Export progress' }, h('span'));
  const pct = Math.min(100, Math.floor((job.progress_num / job.progress_den) * 100));
  const fill = h('span');
  fill.style.width = `${pct}%`;
  return h('div', { class: 'bar', role: 'progressbar', 'aria-label': 'Export progress', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct, 'aria-valuetext': `${pct}%` }, fill);
}

/** Download under the export's own name: a media URL of this origin, so the browser keeps the `download` name. */
function downloadLink(assetId: string, name: string): HTMLElement {
  const a = h('a', { class: 'download', download: name, href: '#', 'data-asset': assetId }, 'Download');
  void mediaUrl(assetId, 'file').then((url) => url && a.setAttribute('href', url));
  a.addEventListener('click', (e) => {
    // A URL minted long ago may have expired: a fresh one, then the same download.
    e.preventDefault();
    void mediaUrl(assetId, 'file').then((url) => {
      if (!url) return;
      a.setAttribute('href', url);
      h('a', { href: url, download: name }).click();
    });
  });
  return a;
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
  exportButton.addEventListener('click', () => void startExport(nameInput.value));
  nameInput.addEventListener('input', () => (nameEdited = true));
  nameInput.addEventListener('keydown', (e) => {
    e.stopPropagation(); // typing a name is not a command (Space, J/K/L, S …)
    if (e.key === 'Enter' && !exportButton.disabled) void startExport(nameInput.value);
  });
}
