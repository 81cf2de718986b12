import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ELECTRON_BINDING, sqliteBinding } from '../../service/db/binding';

/** Which better-sqlite3 build a process loads (service/db/binding.ts): Node's own, or the Electron build kept apart. */

const project = join('/home/me', 'backlot');
const packaged = join('/opt', 'Backlot', 'resources', 'app.asar');
const unpacked = join('/opt', 'Backlot', 'resources', 'app.asar.unpacked');

const cases: Array<[string, Parameters<typeof sqliteBinding>[0], string | undefined]> = [
  ['plain Node: better-sqlite3 finds its own build', { electron: undefined, override: undefined, appRoot: project }, undefined],
  ['plain Node ignores the override (it names an Electron build)', { electron: undefined, override: '/x/e.node', appRoot: project }, undefined],
  ['plain Node, the packaged tree (the package smoke test)', { electron: undefined, override: undefined, appRoot: packaged }, undefined],
  ['npm start under Electron: the project build/electron', { electron: '45.4.1', override: undefined, appRoot: project }, join(project, ELECTRON_BINDING)],
  ['packaged under Electron: read from app.asar.unpacked', { electron: '45.4.1', override: undefined, appRoot: packaged }, join(unpacked, ELECTRON_BINDING)],
  ['the override wins under Electron', { electron: '45.4.1', override: '/x/e.node', appRoot: project }, '/x/e.node'],
  ['an override inside app.asar is read unpacked', { electron: '45.4.1', override: join(packaged, 'b.node'), appRoot: packaged }, join(unpacked, 'b.node')],
  ['an empty override is no override', { electron: '45.4.1', override: '', appRoot: project }, join(project, ELECTRON_BINDING)],
  ['a folder merely named like the archive is left alone', { electron: '45.4.1', override: undefined, appRoot: join('/srv', 'app.asarx') }, join('/srv', 'app.asarx', ELECTRON_BINDING)],
];

for (const [name, query, expected] of cases) test(name, () => assert.equal(sqliteBinding(query), expected));

test('the Electron build lives at build/electron/better_sqlite3.node', () => {
  assert.equal(ELECTRON_BINDING, join('build', 'electron', 'better_sqlite3.node'));
});
