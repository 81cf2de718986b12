import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { send } from './helpers/http';
import { startService, tempDir } from './helpers/service';

/**
 * `serve --log-file` (or BACKLOT_LOG_FILE=1): what the service prints also
 * goes to DIR/logs/backlot.log, each line stamped, kept after it stops; the
 * desktop app does the same always (test/shell.test.ts). Without the flag,
 * no log file is written.
 */

const STAMP = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `;

const cases: Array<[string, { args: string[]; env?: NodeJS.ProcessEnv }]> = [
  ['--log-file', { args: ['--log-file', '--access-log'] }],
  ['BACKLOT_LOG_FILE=1', { args: ['--access-log'], env: { BACKLOT_LOG_FILE: '1' } }],
];
for (const [name, options] of cases) {
  test(`serve ${name}: the ready line, stderr and the access log land in DIR/logs/backlot.log`, async () => {
    const dataDir = tempDir();
    const svc = await startService({ ...options, dataDir, keepDataDir: true });
    try {
      assert.equal((await send(svc.port, { method: 'GET', path: '/api/v1/openapi.json' })).status, 200);
      assert.equal(await svc.stop(), 0);
      const log = readFileSync(join(dataDir, 'logs', 'backlot.log'), 'utf8');
      assert.match(log, new RegExp(`^${STAMP}Backlot listening on ${svc.origin}$`, 'm'));
      assert.match(log, new RegExp(`^${STAMP}API ${svc.origin}/api/v1, data dir ${dataDir}$`, 'm'));
      assert.match(log, new RegExp(`^${STAMP}\\S+ \\S+ GET /api/v1/openapi\\.json 200 [\\d.]+ms$`, 'm'), `the access log line in\n${log}`);
      assert.match(log, new RegExp(`^${STAMP}SIGTERM: stopping$`, 'm'), 'written at exit too');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

test('serve without the flag writes no log file', async () => {
  const dataDir = tempDir();
  const svc = await startService({ dataDir, keepDataDir: true });
  try {
    assert.equal(await svc.stop(), 0);
    assert.equal(existsSync(join(dataDir, 'logs', 'backlot.log')), false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
