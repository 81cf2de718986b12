import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ELECTRON_ABI_ENV, ELECTRON_BINDING, runsInElectron, sqliteBinding } from '../../service/db/binding';

/** Which better-sqlite3 build a process loads (service/db/binding.ts): Node's own, or the Electron build kept apart. */

const project = join('/home/me', 'backlot');
const packaged = join('/opt', 'Backlot', 'resources', 'app.asar');
const unpacked = join('/opt', 'Backlot', 'resources', 'app.asar.unpacked');

const cases: Array<[string, Parameters<typeof sqliteBinding>[0], string | undefined]> = [
  ['plain Node: better-sqlite3 finds its own build', { electron: false, override: undefined, appRoot: project }, undefined],
  ['plain Node ignores the override (it names an Electron build)', { electron: false, override: '/x/e.node', appRoot: project }, undefined],
  ['plain Node, the packaged tree (the package smoke test)', { electron: false, override: undefined, appRoot: packaged }, undefined],
  ['npm start under Electron: the project build/electron', { electron: true, override: undefined, appRoot: project }, join(project, ELECTRON_BINDING)],
  ['packaged under Electron: read from app.asar.unpacked', { electron: true, override: undefined, appRoot: packaged }, join(unpacked, ELECTRON_BINDING)],
  ['the override wins under Electron', { electron: true, override: '/x/e.node', appRoot: project }, '/x/e.node'],
  ['an override inside app.asar is read unpacked', { electron: true, override: join(packaged, 'b.node'), appRoot: packaged }, join(unpacked, 'b.node')],
  ['an empty override is no override', { electron: true, override: '', appRoot: project }, join(project, ELECTRON_BINDING)],
  ['a folder merely named like the archive is left alone', { electron: true, override: undefined, appRoot: join('/srv', 'app.asarx') }, join('/srv', 'app.asarx', ELECTRON_BINDING)],
];

for (const [name, query, expected] of cases) test(name, () => assert.equal(sqliteBinding(query), expected));

test('the Electron build lives at build/electron/better_sqlite3.node', () => {
  assert.equal(ELECTRON_BINDING, join('build', 'electron', 'better_sqlite3.node'));
});

describe('runsInElectron', () => {
  const cases: Array<[string, { electron?: string; modules: string }, NodeJS.ProcessEnv, boolean]> = [
    ["Electron's main process", { electron: '45.4.1', modules: '140' }, {}, true],
    ['plain Node', { modules: '115' }, {}, false],
    ["a worker thread in Electron that shows no electron version: the main thread's mark, same ABI", { modules: '140' }, { [ELECTRON_ABI_ENV]: '140' }, true],
    ['a plain Node process that inherited the mark: another ABI', { modules: '115' }, { [ELECTRON_ABI_ENV]: '140' }, false],
    ['an empty mark', { modules: '115' }, { [ELECTRON_ABI_ENV]: '' }, false],
  ];
  for (const [name, versions, env, expected] of cases) test(name, () => assert.equal(runsInElectron(versions, env), expected));
});
