import { ApiFailure, call } from '../lib/api';
import { announce, h, replace } from '../lib/dom';

/**
 * "Copy diagnostics" in the launcher's header: reads
 * `GET /launcher/diagnostics` (versions, platform, paths, media tools, the
 * log's last lines; nothing secret) and puts it on the clipboard as text a
 * person pastes into a bug report, then says so in words. Where the page may
 * not write the clipboard (a browser that refuses, a desktop shell that
 * grants no permission), the text is shown selected for the person to copy.
 */

interface Diagnostics {
  version: string;
  generated_at: string;
  runtime: Record<string, string | number | null>;
  paths: Record<string, string | null>;
  media_tools: Record<string, { path: string | null; source: string | null }>;
  log: { file: string; present: boolean; lines: string[] };
}

/** The report as plain text (pure). */
export function diagnosticsText(d: Diagnostics): string {
  const rows = (record: Record<string, string | number | null>) => Object.entries(record).map(([k, v]) => `${k}: ${v ?? '(none)'}`);
  return [
    `Backlot ${d.version} diagnostics (${d.generated_at})`,
    '',
    ...rows(d.runtime),
    '',
    ...rows(d.paths),
    ...Object.entries(d.media_tools).map(([tool, t]) => `${tool}: ${t.path === null ? '(none found)' : `${t.path} (${t.source})`}`),
    '',
    d.log.present ? `Last ${d.log.lines.length} lines of ${d.log.file}:` : `No log file at ${d.log.file}.`,
    ...d.log.lines,
    '',
  ].join('\n');
}

export function diagnosticsControl(): HTMLElement {
  const status = h('span', { class: 'diagnostics-status', role: 'status', 'aria-live': 'polite' });
  const manual = h('div', { class: 'diagnostics-manual', hidden: true });
  const button = h('button', { type: 'button', class: 'diagnostics-copy' }, 'Copy diagnostics');
  const say = (text: string, tone: 'ok' | 'error') => {
    status.textContent = text;
    status.dataset.tone = tone;
    announce(text);
  };

  button.addEventListener('click', async () => {
    button.disabled = true;
    manual.hidden = true;
    say('Collecting diagnostics…', 'ok');
    try {
      const text = diagnosticsText(await call<Diagnostics>('/launcher/diagnostics'));
      if (await copy(text)) {
        say('Diagnostics copied to the clipboard. Paste them into your bug report.', 'ok');
      } else {
        const area = h('textarea', { readonly: true, rows: 12, 'aria-label': 'Diagnostics' });
        area.value = text;
        const close = h('button', { type: 'button' }, 'Close');
        close.addEventListener('click', () => {
          manual.hidden = true;
          status.textContent = '';
          button.focus();
        });
        replace(manual, area, close);
        manual.hidden = false;
        area.focus();
        area.select();
        area.scrollTop = 0;
        say('This window may not use the clipboard. Copy by hand: the diagnostics are selected below (Ctrl+C, or ⌘C on a Mac).', 'error');
      }
    } catch (err) {
      say(`Could not collect diagnostics: ${err instanceof ApiFailure ? err.message : String(err)}`, 'error');
    } finally {
      button.disabled = false;
    }
  });
  // The status before the button: the button keeps its place at the header's end while the words change.
  return h('div', { class: 'diagnostics' }, status, button, manual);
}

/** The clipboard API, else the older copy command; false when neither may write. */
async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'visually-hidden', readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      area.remove();
    }
  }
}
