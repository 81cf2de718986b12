import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import { SHAPES } from '../tools/api-types';

/**
 * Dependency direction, checked (docs/design.md "Layers: dependencies point
 * down, checked by a test"; VS Code enforces its layers the same way). The scan reads the TypeScript sources, not dist/.
 *
 * - service/core and service/db import no domain (any other folder directly
 *   under service/, media included) and neither service/app nor service/admin.
 * - A domain imports core, db, media, its own folder, and another domain only
 *   through that domain's index.ts. service/app.ts and friends also reach a
 *   domain only through its index.ts.
 * - service/media (the one module that runs ffmpeg/ffprobe) imports only core.
 * - Nothing under service/ imports main/, cli/, renderer/ or 'electron'.
 * - The walk from createService into the domains goes down the floors
 *   (docs/design.md "createService in three rooms"): service/app.ts, then its
 *   rooms (service/compose.ts, service/http/, service/lifecycle.ts), then the
 *   domains and the other modules under service/, then core and db. Nothing
 *   imports a room or app.ts from its own floor or below; a room imports
 *   neither app.ts nor another room.
 * - main/ imports from service/ only service/app and service/data-dir.
 * - cli/ imports from service/ only service/app, service/admin,
 *   service/data-dir, service/data-dir-lock (`serve` refuses a locked data
 *   dir before loading the service) and service/core/auth.
 * - renderer/ imports nothing from main/ or service/ (it talks HTTP only).
 * - The pages take the API's shapes only from renderer/lib/api-types.ts
 *   (generated from docs/openapi.json by tools/api-types.ts): no other
 *   renderer file declares a type of the same name.
 * - The editor page (renderer/editor/) is state, actions and views
 *   (docs/design.md, "The editor page is state, actions and views"):
 *   frames.ts and types.ts import nothing of the page; state.ts only them;
 *   actions/ never import views/ or main.ts; views/ never import state.ts
 *   (they read it through read.ts and change it only by calling actions);
 *   nothing but main.ts imports main.ts.
 */

const ROOT = path.resolve(__dirname, '..', '..');

const TS = /\.(ts|tsx|mts|cts)$/;
const SCANNED: { dir: string; pattern: RegExp }[] = [
  { dir: 'main', pattern: TS },
  { dir: 'cli', pattern: TS },
  { dir: 'service', pattern: TS },
  { dir: 'renderer', pattern: /\.(ts|tsx|mts|cts|js|mjs|cjs)$/ },
];

/** Folders directly under service/ that are not domains. */
const BASE = new Set(['core', 'db']);
/** What every domain may use besides its own folder. */
const SHARED = new Set(['core', 'db', 'media']);
/** The rooms createService is built from: floor 2, between service/app.ts and the domains. */
const ROOM_MODULES = new Set(['compose', 'lifecycle']);
const ROOM_FOLDERS = new Set(['http']);
/** Shared layers above core that may use nothing but core. */
const CORE_ONLY = new Set(['media']);
const MAIN_MAY_USE = new Set(['service/app', 'service/data-dir']);
const CLI_MAY_USE = new Set(['service/app', 'service/admin', 'service/data-dir', 'service/data-dir-lock', 'service/core/auth']);

export interface SourceFile {
  /** Root-relative, '/'-separated, with its extension. */
  file: string;
  /** Import specifiers exactly as written. */
  imports: string[];
}

type Target = { kind: 'package'; name: string } | { kind: 'module'; path: string };

/** A place under service/: a top-level module (app, admin, data-dir) or a folder and the path inside it. */
type ServicePlace = { top: string } | { folder: string; inner: string };

const stripExtension = (p: string) => p.replace(/\.(ts|tsx|mts|cts|js|mjs|cjs|json)$/, '');

function resolveTarget(file: string, spec: string): Target {
  if (!spec.startsWith('.')) return { kind: 'package', name: spec };
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
  return { kind: 'module', path: stripExtension(joined).replace(/\/$/, '') };
}

function servicePlace(modulePath: string, topModules: Set<string>): ServicePlace | null {
  const [area, name, ...rest] = modulePath.split('/');
  if (area !== 'service' || name === undefined) return null;
  if (rest.length === 0 && topModules.has(name)) return { top: name };
  return { folder: name, inner: rest.join('/') };
}

const isIndex = (place: { inner: string }) => place.inner === '' || place.inner === 'index';

/** 3 service/app, 2 its rooms, 1 the domains and the other modules, 0 core and db. */
function floorOf(place: ServicePlace): number {
  if ('top' in place) return place.top === 'app' ? 3 : ROOM_MODULES.has(place.top) ? 2 : 1;
  if (ROOM_FOLDERS.has(place.folder)) return 2;
  return BASE.has(place.folder) ? 0 : 1;
}

const placeName = (place: ServicePlace) => ('top' in place ? `service/${place.top}.ts` : `service/${place.folder}/`);

/** Why `file` may not import `spec`, or null when it may. */
function ruleBroken(file: string, spec: string, topModules: Set<string>): string | null {
  const area = file.split('/')[0];
  const target = resolveTarget(file, spec);
  if (target.kind === 'package') {
    const electron = target.name === 'electron' || target.name.startsWith('electron/');
    return area === 'service' && electron ? 'service/ is a plain Node library; Electron never appears under it' : null;
  }
  const toArea = target.path.split('/')[0];
  const to = servicePlace(target.path, topModules);
  switch (area) {
    case 'service': {
      if (toArea === 'main' || toArea === 'cli' || toArea === 'renderer') return 'nothing under service/ imports main/, cli/ or renderer/';
      if (!to) return null;
      const me = servicePlace(stripExtension(file), topModules)!;
      const sameFolder = 'folder' in me && 'folder' in to && me.folder === to.folder;
      // (A domain or core importing app.ts keeps its own message below.)
      const upward = floorOf(to) === 2 || (floorOf(to) === 3 && (floorOf(me) === 2 || 'top' in me));
      if (!sameFolder && upward && floorOf(to) >= floorOf(me)) {
        return `${placeName(to)} is above ${placeName(me)}: the walk goes app → compose, http/, lifecycle → domains → core, db`;
      }
      if (floorOf(me) >= 2) {
        const reached = 'folder' in to && !sameFolder && !SHARED.has(to.folder) && !ROOM_FOLDERS.has(to.folder) && !isIndex(to);
        return reached ? 'a domain is reached only through its index.ts' : null;
      }
      if ('top' in me) {
        return 'folder' in to && !SHARED.has(to.folder) && !isIndex(to) ? 'a domain is reached only through its index.ts' : null;
      }
      if ('folder' in to && to.folder === me.folder) return null;
      if (BASE.has(me.folder)) {
        if ('top' in to) return to.top === 'app' || to.top === 'admin' ? `service/${me.folder} imports neither service/app nor service/admin` : null;
        return BASE.has(to.folder) ? null : `service/${me.folder} imports no domain`;
      }
      if (CORE_ONLY.has(me.folder)) return 'folder' in to && to.folder === 'core' ? null : `service/${me.folder} imports only core`;
      if ('top' in to) return 'a domain imports only core, db, media and other domains through their index.ts';
      if (SHARED.has(to.folder) || isIndex(to)) return null;
      return `another domain is reached only through its index.ts (service/${to.folder})`;
    }
    case 'main':
      return toArea === 'service' && !MAIN_MAY_USE.has(target.path) ? 'main/ imports from service/ only service/app and service/data-dir' : null;
    case 'cli':
      return toArea === 'service' && !CLI_MAY_USE.has(target.path)
        ? 'cli/ imports from service/ only service/app, service/admin, service/data-dir, service/data-dir-lock and service/core/auth'
        : null;
    case 'renderer':
      if (toArea === 'main' || toArea === 'service') return 'renderer/ talks to the service over HTTP only';
      return editorLayerBroken(stripExtension(file), target.path);
    default:
      return null;
  }
}

const EDITOR = 'renderer/editor/';

/** The editor page's layers: which of its modules may import which. */
function editorLayerBroken(from: string, to: string): string | null {
  if (!from.startsWith(EDITOR) || !to.startsWith(EDITOR)) return null;
  const me = from.slice(EDITOR.length);
  const it = to.slice(EDITOR.length);
  const layer = (m: string) => (m.startsWith('actions/') ? 'actions' : m.startsWith('views/') ? 'views' : m);
  if (it === 'main') return 'nothing imports the editor page\'s main.ts';
  if (me === 'frames' || me === 'types') return `editor ${me}.ts is pure and imports nothing of the page`;
  if (me === 'state') return it === 'frames' || it === 'types' ? null : 'editor state.ts imports only frames.ts and types.ts';
  if (me === 'read') return layer(it) === 'actions' || layer(it) === 'views' ? 'editor read.ts imports no action or view' : null;
  if (layer(me) === 'actions' && layer(it) === 'views') return 'editor actions never import views (they reach the player and viewport through state.ts ports)';
  if (layer(me) === 'views' && it === 'state') return 'editor views read state through read.ts and change it only through actions';
  return null;
}

/** Every broken rule, as "X may not import Y (why)". Pure over the scanned list. */
export function findViolations(files: readonly SourceFile[]): string[] {
  const topModules = new Set(
    files.map((f) => /^service\/([^/]+)\.[a-z]+$/.exec(f.file)?.[1]).filter((name): name is string => name !== undefined),
  );
  const found: string[] = [];
  for (const { file, imports } of files) {
    for (const spec of imports) {
      const why = ruleBroken(file, spec, topModules);
      if (why) found.push(`${file} may not import ${spec} (${why})`);
    }
  }
  return found;
}

/** Import, export-from, require() and import() specifiers; comments and strings are not mistaken for them. */
export function extractImports(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
}

function scanSources(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (rel: string, pattern: RegExp) => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(child, pattern);
      } else if (pattern.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.push({ file: child, imports: extractImports(readFileSync(path.join(root, child), 'utf8')) });
      }
    }
  };
  for (const { dir, pattern } of SCANNED) {
    if (existsSync(path.join(root, dir))) walk(dir, pattern);
  }
  return files;
}

/** The generated module, the one place pages take the API's shapes from. */
const API_TYPES = 'renderer/lib/api-types.ts';
/** Every top-level interface or type alias named like an API shape outside the generated module, as "file declares Name". */
export function findHandCopiedShapes(files: readonly { file: string; source: string }[], names: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const { file, source } of files) {
    if (file === API_TYPES) continue;
    const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false);
    for (const node of sf.statements) {
      if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && names.has(node.name.text)) {
        found.push(`${file} declares ${node.name.text}`);
      }
    }
  }
  return found;
}

function rendererSources(root: string): { file: string; source: string }[] {
  const out: { file: string; source: string }[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (/\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push({ file: child, source: readFileSync(path.join(root, child), 'utf8') });
    }
  };
  walk('renderer');
  return out;
}

const SHAPE_NAMES = new Set(['Page', ...SHAPES.map((s) => s.name)]);

describe('architecture', () => {
  test('pages take API shapes only from renderer/lib/api-types.ts (generated from docs/openapi.json)', () => {
    const files = rendererSources(ROOT);
    assert.ok(files.some((f) => f.file === API_TYPES), `${API_TYPES} not found under ${ROOT}`);
    const found = findHandCopiedShapes(files, SHAPE_NAMES);
    assert.deepEqual(found, [], `\n${found.join('\n')}\nimport these from ${API_TYPES} instead`);
  });

  test('self-check: a hand-copied API shape is found, an import or a local type is not', () => {
    const files = [
      { file: 'renderer/editor/main.ts', source: "import type { Timeline } from '../lib/api-types';\ninterface Job { id: string }\ntype Clip = { start: number };\ninterface Selection { n: number }" },
      { file: 'renderer/lib/api.ts', source: "export type { Page } from './api-types';\nexport interface Page2<T> { items: T[] }" },
      { file: 'renderer/lib/api-types.ts', source: 'export interface Job { id: string }' },
      { file: 'renderer/launcher/gallery.ts', source: 'export interface Item { id: string }' },
    ];
    assert.deepEqual(findHandCopiedShapes(files, SHAPE_NAMES), [
      'renderer/editor/main.ts declares Job',
      'renderer/editor/main.ts declares Clip',
      'renderer/launcher/gallery.ts declares Item',
    ]);
  });

  test('the sources respect the dependency direction', () => {
    const files = scanSources(ROOT);
    const names = files.map((f) => f.file);
    // Guards against scanning the wrong tree (dist/, or nothing) and passing vacuously.
    assert.ok(names.includes('service/app.ts'), `service/app.ts not found under ${ROOT}`);
    assert.ok(names.includes('service/core/errors.ts'), `service/core/errors.ts not found under ${ROOT}`);
    assert.ok(files.some((f) => f.imports.length > 0), 'no imports were found at all');
    const violations = findViolations(files);
    assert.deepEqual(violations, [], `\n${violations.join('\n')}`);
  });

  test('createService walks down: service/app.ts builds it from its three rooms', () => {
    const files = scanSources(ROOT);
    const app = files.find((f) => f.file === 'service/app.ts')!;
    const rooms = app.imports.map((spec) => resolveTarget('service/app.ts', spec)).filter((t) => t.kind === 'module').map((t) => (t as { path: string }).path);
    for (const room of ['service/compose', 'service/lifecycle']) assert.ok(rooms.includes(room), `service/app.ts does not import ${room}`);
    assert.ok(rooms.some((p) => p.startsWith('service/http/')), 'service/app.ts does not import the HTTP chain (service/http/)');
    assert.match(readFileSync(path.join(ROOT, 'service/app.ts'), 'utf8'), /export function createService\(options: ServiceOptions\): Service/);
    // Every room is there, and each stays a small file.
    for (const f of files.filter((x) => /^service\/(compose|lifecycle)\.ts$|^service\/http\//.test(x.file))) {
      const lines = readFileSync(path.join(ROOT, f.file), 'utf8').split('\n').length;
      assert.ok(lines <= 300, `${f.file} has ${lines} lines`);
    }
  });

  test('self-check: the scanner reports every kind of violation in a synthetic tree', () => {
    const tree: SourceFile[] = [
      { file: 'service/app.ts', imports: ['koa', './core/errors', './db/open', './kv', './studios/index', './kv/store', '../main/paths'] },
      { file: 'service/admin.ts', imports: ['./core/auth', './studios'] },
      { file: 'service/data-dir.ts', imports: ['node:path'] },
      { file: 'service/core/errors.ts', imports: [] },
      { file: 'service/core/route.ts', imports: ['./errors', '../db/open', '../data-dir', '../kv', '../media/run', '../app', '../admin'] },
      { file: 'service/db/open.ts', imports: ['better-sqlite3', '../core/errors', './migrations', '../sessions/store'] },
      {
        file: 'service/kv/store.ts',
        imports: [
          'zod', 'node:fs', './schema', './index', '../core/errors', '../db/open', '../media/probe',
          '../studios', '../studios/', '../studios/index', '../studios/index.js', '../studios/store', '../app', '../data-dir',
        ],
      },
      { file: 'service/media/run.ts', imports: ['node:child_process', '../core/errors', './resolve', '../jobs', '../jobs/store', '../db/open', '../data-dir', 'electron'] },
      { file: 'service/jobs/index.ts', imports: ['./store', 'electron/main', '../../cli/main', '../../renderer/app.js'] },
      { file: 'main/main.ts', imports: ['electron', '../service/app', '../service/data-dir', '../service/kv', '../service/core/auth'] },
      { file: 'cli/main.ts', imports: ['../service/app', '../service/admin', '../service/data-dir', '../service/core/auth', '../service/core/errors'] },
      { file: 'renderer/launcher/app.js', imports: ['./util.js', '../../service/core/errors', '../../main/preload'] },
      { file: 'service/compose.ts', imports: ['./core/auth', './kv', './app', './lifecycle', './http/chain', './records/store'] },
      { file: 'service/lifecycle.ts', imports: ['./core/origin', './launcher', './compose'] },
      { file: 'service/http/chain.ts', imports: ['./front', '../core/route', '../ui', '../compose', '../app', '../editor/routes'] },
      { file: 'service/kv/routes.ts', imports: ['../core/route', '../http/front', '../compose', '../lifecycle'] },
      { file: 'service/core/route2.ts', imports: ['../http/front', '../compose'] },
      { file: 'renderer/editor/main.ts', imports: ['./state', './views/timeline', './actions/live'] },
      { file: 'renderer/editor/frames.ts', imports: ['./types'] },
      { file: 'renderer/editor/state.ts', imports: ['./frames', './types', '../lib/job', './read', './actions/edits'] },
      { file: 'renderer/editor/read.ts', imports: ['./state', './frames', './views/timeline'] },
      { file: 'renderer/editor/actions/edits.ts', imports: ['../state', '../read', './notice', '../views/timeline', '../main'] },
      { file: 'renderer/editor/views/timeline.ts', imports: ['../read', '../actions/edits', './posters', '../state'] },
    ];
    assert.deepEqual(findViolations(tree), [
      'service/app.ts may not import ./kv/store (a domain is reached only through its index.ts)',
      'service/app.ts may not import ../main/paths (nothing under service/ imports main/, cli/ or renderer/)',
      'service/core/route.ts may not import ../kv (service/core imports no domain)',
      'service/core/route.ts may not import ../media/run (service/core imports no domain)',
      'service/core/route.ts may not import ../app (service/core imports neither service/app nor service/admin)',
      'service/core/route.ts may not import ../admin (service/core imports neither service/app nor service/admin)',
      'service/db/open.ts may not import ../sessions/store (service/db imports no domain)',
      'service/kv/store.ts may not import ../studios/store (another domain is reached only through its index.ts (service/studios))',
      'service/kv/store.ts may not import ../app (a domain imports only core, db, media and other domains through their index.ts)',
      'service/kv/store.ts may not import ../data-dir (a domain imports only core, db, media and other domains through their index.ts)',
      'service/media/run.ts may not import ../jobs (service/media imports only core)',
      'service/media/run.ts may not import ../jobs/store (service/media imports only core)',
      'service/media/run.ts may not import ../db/open (service/media imports only core)',
      'service/media/run.ts may not import ../data-dir (service/media imports only core)',
      'service/media/run.ts may not import electron (service/ is a plain Node library; Electron never appears under it)',
      'service/jobs/index.ts may not import electron/main (service/ is a plain Node library; Electron never appears under it)',
      'service/jobs/index.ts may not import ../../cli/main (nothing under service/ imports main/, cli/ or renderer/)',
      'service/jobs/index.ts may not import ../../renderer/app.js (nothing under service/ imports main/, cli/ or renderer/)',
      'main/main.ts may not import ../service/kv (main/ imports from service/ only service/app and service/data-dir)',
      'main/main.ts may not import ../service/core/auth (main/ imports from service/ only service/app and service/data-dir)',
      'cli/main.ts may not import ../service/core/errors (cli/ imports from service/ only service/app, service/admin, service/data-dir, service/data-dir-lock and service/core/auth)',
      'renderer/launcher/app.js may not import ../../service/core/errors (renderer/ talks to the service over HTTP only)',
      'renderer/launcher/app.js may not import ../../main/preload (renderer/ talks to the service over HTTP only)',
      'service/compose.ts may not import ./app (service/app.ts is above service/compose.ts: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/compose.ts may not import ./lifecycle (service/lifecycle.ts is above service/compose.ts: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/compose.ts may not import ./http/chain (service/http/ is above service/compose.ts: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/compose.ts may not import ./records/store (a domain is reached only through its index.ts)',
      'service/lifecycle.ts may not import ./compose (service/compose.ts is above service/lifecycle.ts: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/http/chain.ts may not import ../compose (service/compose.ts is above service/http/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/http/chain.ts may not import ../app (service/app.ts is above service/http/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/http/chain.ts may not import ../editor/routes (a domain is reached only through its index.ts)',
      'service/kv/routes.ts may not import ../http/front (service/http/ is above service/kv/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/kv/routes.ts may not import ../compose (service/compose.ts is above service/kv/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/kv/routes.ts may not import ../lifecycle (service/lifecycle.ts is above service/kv/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/core/route2.ts may not import ../http/front (service/http/ is above service/core/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'service/core/route2.ts may not import ../compose (service/compose.ts is above service/core/: the walk goes app → compose, http/, lifecycle → domains → core, db)',
      'renderer/editor/frames.ts may not import ./types (editor frames.ts is pure and imports nothing of the page)',
      'renderer/editor/state.ts may not import ./read (editor state.ts imports only frames.ts and types.ts)',
      'renderer/editor/state.ts may not import ./actions/edits (editor state.ts imports only frames.ts and types.ts)',
      'renderer/editor/read.ts may not import ./views/timeline (editor read.ts imports no action or view)',
      'renderer/editor/actions/edits.ts may not import ../views/timeline (editor actions never import views (they reach the player and viewport through state.ts ports))',
      'renderer/editor/actions/edits.ts may not import ../main (nothing imports the editor page\'s main.ts)',
      'renderer/editor/views/timeline.ts may not import ../state (editor views read state through read.ts and change it only through actions)',
    ]);
  });

  test('self-check: import extraction sees every form and ignores comments and strings', () => {
    const source = [
      "// import a from '../commented';",
      "/* require('../block') */",
      "import x, { type Y } from './a';",
      "import type { Z } from '../b/index';",
      "export * from './c';",
      "export { d } from './d';",
      "import './side';",
      "import e = require('./e');",
      "const f = require('./f');",
      "const g = import('./g');",
      "const s = \"import q from '../in-string'\";",
      'const re = /^W\\//i;',
    ].join('\n');
    assert.deepEqual(extractImports(source), ['./a', '../b/index', './c', './d', './side', './e', './f', './g']);
  });
});
