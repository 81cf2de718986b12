import { dispatch } from './actions/commands';
import { connect } from './actions/live';
import { ports, requestRender, setRenderer, state, type Part } from './state';
import { drawBin } from './views/bin';
import { drawBrowser, wireBrowser } from './views/browser';
import { drawExports, drawPlan, wireExport } from './views/export';
import { drawInspector } from './views/inspector';
import { buildPage, drawConnection, drawHead, drawStatus } from './views/layout';
import { drawRevisions } from './views/revisions';
import { drawMarks, drawPlayhead, drawSelection, drawTimeline, viewport, wireTimeline } from './views/timeline';
import { drawPlayheadField, drawToolbar, wireToolbar } from './views/toolbar';
import { drawViewer, player, wireViewer } from './views/viewer';

/**
 * The editor surface at /editor/: stays connected to /editor/events and shows
 * the sequence the last `:open` named, then edits it through the launcher's
 * mirror of the studio's routes (/api/v1/launcher/timeline/{id}, acting as the
 * owning studio). The page is state (state.ts, one object), actions
 * (actions/: every change, and the command table with its keys) and views
 * (views/: drawing and input); docs/design.md says how they depend on each
 * other. This file wires them: the one render, the ports, the listeners.
 */

/** Each part a render was asked for, drawn by the view that owns it. */
function render(parts: ReadonlySet<Part>): void {
  if (parts.has('head')) drawHead();
  if (parts.has('timeline')) drawTimeline();
  else {
    if (parts.has('selection')) drawSelection();
    if (parts.has('playhead')) drawPlayhead();
    if (parts.has('marks')) drawMarks();
  }
  if (parts.has('timeline') || parts.has('toolbar') || parts.has('revisions')) drawToolbar();
  if (parts.has('timeline') || parts.has('playhead')) drawPlayheadField();
  if (parts.has('inspector') || parts.has('selection')) drawInspector();
  if (parts.has('viewer')) drawViewer();
  if (parts.has('revisions')) drawRevisions();
  if (parts.has('plan')) drawPlan();
  if (parts.has('exports')) drawExports();
  if (parts.has('status')) drawStatus();
  if (parts.has('connection')) drawConnection();
  if (parts.has('browser')) drawBrowser();
  if (parts.has('bin')) drawBin();
}

setRenderer(render);
ports.player = player;
ports.viewport = viewport;
buildPage(document.getElementById('app')!);
wireToolbar();
wireTimeline();
wireViewer();
wireExport();
wireBrowser();
requestRender('browser');
window.addEventListener('resize', () => {
  if (state.tl) requestRender('timeline');
});
document.addEventListener('keydown', (e) => dispatch(e, 'page'));
connect();
