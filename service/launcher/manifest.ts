import { isAbsolute, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { CAPABILITIES } from '../core/auth';
import { ApiError } from '../core/errors';
import { STUDIO_ID_PATTERN } from '../core/origin';
import { zodToApiError } from '../core/route';
import { ASSET_KINDS } from '../assets';
import { CommandSyntaxError, splitCommand } from '../jobs';

/**
 * The studio manifest `backlot.json` (docs/studios.md "The manifest, `backlot.json`"): one zod schema (closed:
 * an unknown member is a typo, and a typo in a manifest should fail loudly),
 * and the pure checks that run before anything of a studio runs:
 *
 * - every `run` splits into an argument vector without a shell (400 naming
 *   the member when it uses shell syntax);
 * - nothing a step, the start command or a download names may resolve
 *   outside the app folder, and a download's scheme is http, https or file
 *   (422 `blocked`).
 */

export const MANIFEST_FILE = 'backlot.json';
/** A manifest larger than this is refused unread. */
export const MAX_MANIFEST_BYTES = 256 * 1024;

const COLLECTION = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Variables the launcher sets itself; a manifest may not set them. */
export const RESERVED_ENV = /^(PORT|BACKLOT_.*)$/;

const command = z.string().min(1).max(4096);
const step = z.strictObject({
  name: z.string().min(1).max(200).meta({ description: 'Shown as the step header in the job log.' }),
  run: command.meta({ description: 'A command line, split into words as a POSIX shell would, without any shell feature.' }),
});
const steps = z.array(step).max(50);

export const manifestSchema = z
  .strictObject({
    id: z.string().regex(STUDIO_ID_PATTERN).meta({ description: 'Also the host name: http://<id>.localhost:PORT/.' }),
    name: z.string().min(1).max(100),
    version: z.string().min(1).max(64),
    description: z.string().max(2000).optional(),
    needs: z
      .array(z.string().min(1).max(60))
      .max(10)
      .optional()
      .meta({ description: 'What the studio needs beyond Backlot itself, in words ("ffmpeg"): shown before it is installed.' }),
    capabilities: z
      .array(z.enum(CAPABILITIES))
      .max(CAPABILITIES.length)
      .refine((caps) => new Set(caps).size === caps.length, 'capabilities must not repeat'),
    heavy: z.boolean().optional().meta({ description: 'At most one heavy studio runs at a time.' }),
    install: steps.optional(),
    build: steps.optional(),
    download: z
      .array(
        z.strictObject({
          url: z.string().min(1).max(4096).meta({ description: 'http, https or file (file:rel/path is relative to the source folder).' }),
          sha256: z.string().regex(/^[0-9a-fA-F]{64}$/).transform((h) => h.toLowerCase()),
          to: z.string().min(1).max(1024).meta({ description: 'A relative path inside the app folder.' }),
        }),
      )
      .max(100)
      .optional(),
    start: z.strictObject({
      run: command.meta({ description: '`{port}` is replaced by the port.' }),
      port: z.int().min(1024).max(65535).optional().meta({ description: 'A fixed port; otherwise a free one.' }),
      ready_path: z
        .string()
        .max(1024)
        .regex(/^\/[\x21-\x7e]*$/)
        .optional()
        .meta({ description: 'Polled until it answers below 500 (default /).' }),
    }),
    accepts: z
      .strictObject({
        kinds: z
          .array(z.enum(ASSET_KINDS))
          .min(1)
          .max(ASSET_KINDS.length)
          .refine((kinds) => new Set(kinds).size === kinds.length, 'kinds must not repeat')
          .meta({ description: 'The asset kinds it takes from other studios (image, video, audio, other).' }),
        path: z
          .string()
          .max(1024)
          .regex(/^\/[\x21-\x22\x24-\x3e\x40-\x7e]*$/, 'path must start with / and hold no space, ? or #')
          .optional()
          .meta({ description: 'Where the user opens a handoff: <origin><path>?handoff=<id> (default /).' }),
      })
      .optional()
      .meta({ description: 'The studio can receive handoffs ("Send to") of these kinds (docs/studios.md "Sending and receiving work").' }),
    collections: z
      .record(z.string().regex(COLLECTION), z.strictObject({ indexes: z.array(z.string().min(1).max(64)).max(32) }))
      .optional(),
    env: z
      .record(
        z.string().regex(ENV_NAME).refine((n) => !RESERVED_ENV.test(n), 'PORT and BACKLOT_* are set by the launcher'),
        z.string().max(4096),
      )
      .refine((e) => Object.keys(e).length <= 64, 'at most 64 variables')
      .optional(),
  })
  .meta({ id: 'Manifest', description: 'backlot.json at the root of a studio folder.' });

export type Manifest = z.output<typeof manifestSchema>;
export type DownloadEntry = NonNullable<Manifest['download']>[number];

/** Parses manifest text: 400 `bad_request` for bad JSON or a bad member (named, e.g. `manifest.install.0.run`). */
export function parseManifest(text: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw ApiError.badRequest(`${MANIFEST_FILE} is not valid JSON: ${(err as Error).message}`, { member: 'manifest' });
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const error = zodToApiError(parsed.error, 'manifest');
    // The member named is the first bad one; an unknown member (a typo) is named itself, not the object holding it.
    const first = parsed.error.issues[0];
    const unknown = first?.code === 'unrecognized_keys' ? first.keys.slice(0, 1) : [];
    const member = first ? ['manifest', ...first.path.map(String), ...unknown].join('.') : 'manifest';
    throw ApiError.badRequest(`${MANIFEST_FILE}: ${error.message}`, { ...error.details, member });
  }
  checkCommands(parsed.data);
  return parsed.data;
}

/** A command as argv, with `{port}` substituted first (the split refuses braces). */
export function commandArgv(run: string, port?: number): string[] {
  return splitCommand(port === undefined ? run : run.replaceAll('{port}', String(port)));
}

/** Every `run` in the manifest with the member that holds it. */
export function commandsOf(m: Manifest): { member: string; run: string }[] {
  const out: { member: string; run: string }[] = [];
  for (const phase of ['install', 'build'] as const) {
    (m[phase] ?? []).forEach((s, i) => out.push({ member: `manifest.${phase}.${i}.run`, run: s.run }));
  }
  out.push({ member: 'manifest.start.run', run: m.start.run });
  return out;
}

function checkCommands(m: Manifest): void {
  for (const { member, run } of commandsOf(m)) {
    let argv: string[];
    try {
      // Only the start command has a port: `{port}` in a step is shell-like syntax, refused here rather than when it runs.
      argv = commandArgv(run, member === 'manifest.start.run' ? 1024 : undefined);
    } catch (err) {
      if (!(err instanceof CommandSyntaxError)) throw err;
      throw ApiError.badRequest(`${MANIFEST_FILE}: ${member}: ${err.message} Commands run without a shell.`, { member });
    }
    if (argv.length === 0) throw ApiError.badRequest(`${MANIFEST_FILE}: ${member} is an empty command.`, { member });
  }
}

export function blocked(message: string, member: string): ApiError {
  return new ApiError(422, 'blocked', message, { member });
}

/**
 * The checks that need the app folder (422 `blocked`), before anything runs:
 * a command word that is a path (absolute, `~`, or with a `..` that climbs
 * out) must stay inside the app folder; a download's `to` must be a relative
 * path inside it; its URL's scheme must be http, https or file.
 */
export function checkContained(m: Manifest, appDir: string): void {
  for (const { member, run } of commandsOf(m)) {
    for (const word of commandArgv(run, 1024)) {
      if (escapes(appDir, word)) {
        throw blocked(`${member}: "${word}" resolves outside the studio's folder; commands may only name files inside it.`, member);
      }
    }
  }
  (m.download ?? []).forEach((d, i) => {
    const member = `manifest.download.${i}`;
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(d.url)?.[1]?.toLowerCase();
    if (scheme !== 'http' && scheme !== 'https' && scheme !== 'file') {
      throw blocked(`${member}.url: only http, https and file URLs are allowed (got ${scheme ? `"${scheme}:"` : 'no scheme'}).`, `${member}.url`);
    }
    if (isAbsolute(d.to) || /^[A-Za-z]:/.test(d.to) || d.to.startsWith('~') || !inside(appDir, resolve(appDir, d.to)) || resolve(appDir, d.to) === resolve(appDir)) {
      throw blocked(`${member}.to: "${d.to}" must be a relative path inside the studio's folder.`, `${member}.to`);
    }
  });
}

/** Whether a command word names a path outside `root`: absolute, home-relative, or climbing out with `..`. */
function escapes(root: string, word: string): boolean {
  // Options such as --out=../x: judge the value.
  const value = /^--?[A-Za-z0-9][\w-]*=(.*)$/s.exec(word)?.[1] ?? word;
  if (value.startsWith('~')) return true;
  if (isAbsolute(value) || /^[A-Za-z]:[\\/]/.test(value)) return true;
  if (!/(^|[\\/])\.\.([\\/]|$)/.test(value)) return false;
  return !inside(root, resolve(root, value));
}

export function inside(root: string, target: string): boolean {
  const rel = relative(resolve(root), resolve(target));
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
