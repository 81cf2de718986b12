import { z } from 'zod';
import { route, type Route } from '../core/route';
import { collectDiagnostics, type DiagnosticsDeps } from './collect';

/**
 * The launcher's diagnostics (launcher credential only):
 *
 *   GET /launcher/diagnostics     versions, platform, paths, media tools, the log's last lines
 */

const resolvedTool = z.object({
  path: z.string().nullable().describe('null when none is found'),
  source: z.enum(['env', 'bundled', 'ffmpeg-static', 'path']).nullable(),
});

const diagnostics = z.object({
  version: z.string(),
  generated_at: z.string(),
  runtime: z.object({
    platform: z.string(),
    arch: z.string(),
    os_release: z.string(),
    node: z.string(),
    electron: z.string().nullable(),
    chrome: z.string().nullable(),
    pid: z.number().int(),
    uptime_s: z.number().int(),
  }),
  paths: z.object({
    data_dir: z.string(),
    database: z.string(),
    log_dir: z.string(),
  }),
  media_tools: z
    .object({ ffmpeg: resolvedTool, ffprobe: resolvedTool })
    .describe('The ffmpeg and ffprobe the media module would run, as it resolves them for a job'),
  log: z.object({
    file: z.string(),
    present: z.boolean(),
    lines: z.array(z.string()).describe('Its last lines (at most 200), credential-shaped text blanked'),
  }),
});

export function diagnosticsRoutes(d: DiagnosticsDeps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/launcher/diagnostics',
      summary: 'Diagnostics for a bug report (the launcher)',
      description:
        'Versions (Backlot, Node, Electron when in the desktop app), platform and architecture, the data dir, database and ' +
        'log paths, the ffmpeg and ffprobe the media module resolves (path and source), and the last lines of DIR/logs/backlot.log when it ' +
        'exists. No token, credential or environment is included; credential-shaped text in log lines is blanked.',
      capability: 'launcher',
      success: { status: 200, description: 'Diagnostics', schema: diagnostics },
      errors: [],
      handle: () => ({ status: 200, body: collectDiagnostics(d) }),
    }),
  ];
}
