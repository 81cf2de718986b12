import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ServiceOptions } from '../service/app';
import { CAPABILITIES, isLauncherCredential } from '../service/core/auth';
import { defaultDataDir } from '../service/data-dir';
import { lockDataDir } from '../service/data-dir-lock';

/**
 * bin/backlot: serve, studio add|set, token create|revoke, index add,
 * launcher-token (README.md "The CLI").
 * Exit codes: 0 done, 1 the command failed (port in use, id taken, unknown
 * studio or token), 2 the command line is wrong.
 */

class UsageError extends Error {}

/**
 * The service, its admin side and the launcher client are loaded on first
 * use: a `serve` that another server's lock refuses answers before loading
 * any of them (docs/api.md "One server per data dir": within a second).
 */
const serviceApp = () => require('../service/app') as typeof import('../service/app');
const serviceAdmin = () => require('../service/admin') as typeof import('../service/admin');
const launcherClient = () => require('./launcher') as typeof import('./launcher');

type Options = NonNullable<ParseArgsConfig['options']>;
const dataDirOption: Options = { 'data-dir': { type: 'string' } };

const HELP: Record<string, string> = {
  main: `Usage: backlot <command> [options]

Commands:
  serve                 run the headless service on 127.0.0.1
  studio add ID         register a studio
  studio set ID         change a studio's quotas
  token create          issue a studio token (printed once)
  token revoke TOKEN    revoke a token or a launcher credential
  index add             declare an index on a record field
  launcher-token        issue a launcher credential (printed once); --list, --revoke-all
  login-url             print a one-time sign-in URL for the running server
  install PATH          install a studio from a folder (on the running server)
  link PATH             install a studio by reference, for studio authors
  start ID / stop ID    start or stop an installed studio
  studios               list the installed studios

Every command takes --data-dir DIR (default: $BACKLOT_HOME, else ${defaultDataDir({}, process.platform)}).
Run 'backlot <command> --help' for a command's options.`,
  serve: `Usage: backlot serve [--data-dir DIR] [--port N] [--upload-limit BYTES] [--body-limit BYTES] [--disk-headroom BYTES] [--read-workers N] [--access-log] [--log-file]

Runs the service on http://127.0.0.1:PORT/api/v1 and prints one ready line.
  --port N               port to listen on (default 7380; 0 picks a free one)
  --upload-limit BYTES   largest asset upload (default 8589934592, 8 GiB)
  --body-limit BYTES     largest JSON body (default 4194304, 4 MiB)
  --disk-headroom BYTES  free space an upload must leave (default 536870912, 512 MiB)
  --access-log           one line per request on stderr
  --log-file             also write what it prints to DIR/logs/backlot.log (rotated at 5 MiB,
                         3 kept), as the desktop app always does; also BACKLOT_LOG_FILE=1
  --read-workers N       threads for reads that grow with the data: record queries, gallery
                         lists, search and lineage, reclaim previews (default: the cores, at
                         least 2; 0 runs them on the main thread, as a baseline)
SIGINT or SIGTERM stops it cleanly.`,
  'studio add': `Usage: backlot studio add ID [--name NAME] [--quota-records N] [--quota-kv-bytes N] [--data-dir DIR]

Registers a studio and creates its stage and data folders; prints {"id","name","stage_dir","data_dir"}.
ID matches ^[a-z][a-z0-9-]{1,31}$. A taken id fails with id_taken.`,
  'studio set': `Usage: backlot studio set ID [--quota-records N] [--quota-kv-bytes N] [--data-dir DIR]

Changes a studio's quotas; a running server applies them from its next request.`,
  'token create': `Usage: backlot token create --studio ID --caps CAP[,CAP...] [--data-dir DIR]

Prints a new token on one line. It is stored only as a hash: keep it.
Capabilities: ${CAPABILITIES.join(', ')}.`,
  'index add': `Usage: backlot index add --studio ID --collection NAME --field FIELD [--data-dir DIR]

Declares an index on a top-level field of a studio's record collection, so eq, in,
ranges and order on that field are served by an index. Results never change, only
speed. Works while serve runs on the same data dir: its next query uses the index.
Prints {"studio_id","collection","field","name","created"}; declaring it again is fine.`,
  'token revoke': `Usage: backlot token revoke TOKEN [--data-dir DIR]

Revokes a studio token or a launcher credential; a running server refuses it from its next request.`,
  'launcher-token': `Usage: backlot launcher-token [--list [--json] | --revoke-all] [--data-dir DIR]

Prints a new launcher credential on one line. It opens the launcher's side of the
service (/api/v1/launcher/..., the editor channel GET /editor/events) and nothing of a
studio's data API. It is stored only as a hash: keep it. Revoke it with 'backlot token revoke'.
A browser signs in with 'backlot login-url' instead.
  --list        the live launcher credentials: id, kind, created, last used, expiry.
                Kinds: browser (a sign-in through a login URL, the desktop window's
                included; expires after 30 days unused), cli (made by this command),
                command (made by a CLI command for itself, revoked after it).
                --json prints them as a JSON array.
  --revoke-all  revokes every live launcher credential: signed-in browsers and windows
                are signed out, and their open streams (launcher events, job logs, the
                editor channel) end within a second; short-lived media URLs stop working.`,
  'login-url': `Usage: backlot login-url [--data-dir DIR]

Prints http://127.0.0.1:PORT/login?code=... for the server running on the data dir.
The link works once, for two minutes, and signs a browser in to the launcher.
Exits 1 when no server runs.`,
  install: `Usage: backlot install PATH [--data-dir DIR]

Installs the studio in the folder PATH (it holds backlot.json) on the running server:
copies it, runs its install, build and download steps, showing their output.
Exits 1 when a step fails or no server runs.`,
  link: `Usage: backlot link PATH [--data-dir DIR]

Installs the studio in PATH by reference: the server runs it from PATH itself, so
edits show at its next start. For studio authors.`,
  start: `Usage: backlot start ID [--data-dir DIR]

Starts an installed studio and waits until it answers; prints its address.`,
  stop: `Usage: backlot stop ID [--data-dir DIR]

Stops a running studio (its whole process group) and revokes its token.`,
  studios: `Usage: backlot studios [--data-dir DIR] [--json]

Lists the installed studios with their state, port and address.`,
};

function parse(args: string[], options: Options, positionals: number, help: string) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, ...dataDirOption, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${help}`);
  }
  if (parsed.values.help) {
    process.stdout.write(`${help}\n`);
    process.exit(0);
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(`Expected ${positionals} argument(s), got ${parsed.positionals.length}.\n\n${help}`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  return { values, positionals: parsed.positionals, dataDir: (values['data-dir'] as string | undefined) ?? defaultDataDir() };
}

function integer(value: unknown, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < min) {
    throw new UsageError(`--${flag} must be a whole number of at least ${min}, not "${text}".`);
  }
  return Number(text);
}

async function serve(args: string[]): Promise<void> {
  const { values, dataDir } = parse(
    args,
    {
      port: { type: 'string' },
      'upload-limit': { type: 'string' },
      'body-limit': { type: 'string' },
      'disk-headroom': { type: 'string' },
      'access-log': { type: 'boolean' },
      'read-workers': { type: 'string' },
      'log-file': { type: 'boolean' },
    },
    0,
    HELP.serve!,
  );
  // Another server's lock refuses this one here, before anything is loaded or
  // written (the log file included); createService takes the lock for good.
  lockDataDir(dataDir).release();
  const { captureOutput, createService, logFilePath, openLogFile } = serviceApp();
  if (values['log-file'] === true || process.env.BACKLOT_LOG_FILE === '1') {
    const log = openLogFile(logFilePath(dataDir));
    captureOutput(log);
    process.on('exit', () => log.flushSync());
  }
  const port = integer(values.port, 'port', 0) ?? 7380;
  if (port > 65535) throw new UsageError('--port must be at most 65535.');
  const options: ServiceOptions = {
    dataDir,
    uploadLimit: integer(values['upload-limit'], 'upload-limit', 1),
    bodyLimit: integer(values['body-limit'], 'body-limit', 1),
    diskHeadroom: integer(values['disk-headroom'], 'disk-headroom', 0),
    accessLog: values['access-log'] === true,
    readWorkers: integer(values['read-workers'], 'read-workers', 0),
  };
  const service = createService(options);
  let address;
  try {
    address = await service.listen(port);
  } catch (err) {
    await service.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`Port ${port} on 127.0.0.1 is already in use. Stop what holds it or pass --port.`);
    throw err;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: stopping\n`);
    // A hard deadline: a stop exits within 5 s (README.md "The CLI").
    setTimeout(() => process.exit(0), 4500).unref();
    service.close().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  // The handlers come first: a supervisor may signal as soon as it reads the ready line.
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.stdout.write(`Backlot listening on ${address.url}\n`);
  process.stdout.write(`Sign in to the launcher (this link works once, for two minutes): ${service.loginUrl()}\n`);
  process.stderr.write(`API ${address.url}/api/v1, data dir ${dataDir}\n`);
  if (process.env.BACKLOT_BENCH_LOOP_DELAY) reportLoopDelay();
}

/**
 * Bench only (bench/responsiveness.ts), never a route: with
 * BACKLOT_BENCH_LOOP_DELAY set, each SIGUSR2 writes the main thread's
 * event-loop delay since the previous one to stderr, then starts over.
 */
function reportLoopDelay(): void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const ms = (ns: number) => (ns / 1e6).toFixed(2);
  process.on('SIGUSR2', () => {
    process.stderr.write(`event-loop-delay p50=${ms(delay.percentile(50))} p99=${ms(delay.percentile(99))} max=${ms(delay.max)} ms\n`);
    delay.reset();
  });
}

function loginUrlCommand(args: string[]): void {
  const { dataDir } = parse(args, {}, 0, HELP['login-url']!);
  const url = withAdmin(dataDir, (admin) => admin.loginUrl());
  if (url === null) throw new (launcherClient().NoServerError)(`No Backlot server is running on ${dataDir}. Start one with 'backlot serve'.`);
  process.stdout.write(`${url}\n`);
}

async function launcherCommand(command: 'install' | 'link' | 'start' | 'stop' | 'studios', args: string[]): Promise<void> {
  const positionals = command === 'studios' ? 0 : 1;
  const { values, positionals: pos, dataDir } = parse(args, command === 'studios' ? { json: { type: 'boolean' } } : {}, positionals, HELP[command]!);
  const out = (text: string) => process.stdout.write(text);
  const { installCommand, startCommand, studiosTable, withServer } = launcherClient();
  const ok = await withServer(dataDir, async (call) => {
    if (command === 'install' || command === 'link') return installCommand(call, pos[0]!, command === 'link', out);
    if (command === 'start') return startCommand(call, pos[0]!, out);
    if (command === 'stop') {
      await call.ok('POST', `/launcher/studios/${pos[0]}:stop`);
      out(`${pos[0]} is stopped.\n`);
      return true;
    }
    const items: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: unknown[]; next_cursor: string | null } = await call.ok('GET', `/launcher/studios?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    out(values.json ? `${JSON.stringify(items)}\n` : studiosTable(items));
    return true;
  });
  if (!ok) process.exitCode = 1;
}

function withAdmin<T>(dataDir: string, fn: (admin: ReturnType<typeof import('../service/admin').openAdmin>) => T): T {
  const admin = serviceAdmin().openAdmin(dataDir);
  try {
    return fn(admin);
  } finally {
    admin.close();
  }
}

function studio(args: string[]): void {
  const [sub, ...rest] = args;
  const quotas: Options = { 'quota-records': { type: 'string' }, 'quota-kv-bytes': { type: 'string' } };
  if (sub === 'add') {
    const { values, positionals, dataDir } = parse(rest, { ...quotas, name: { type: 'string' } }, 1, HELP['studio add']!);
    const { STUDIO_ID_PATTERN } = serviceAdmin();
    if (!STUDIO_ID_PATTERN.test(positionals[0]!)) {
      throw new UsageError(`The studio id "${positionals[0]}" must match ${STUDIO_ID_PATTERN.source}.`);
    }
    const input = {
      id: positionals[0]!,
      name: values.name as string | undefined,
      quotaRecords: integer(values['quota-records'], 'quota-records', 0),
      quotaKvBytes: integer(values['quota-kv-bytes'], 'quota-kv-bytes', 0),
    };
    const out = withAdmin(dataDir, (admin) => admin.addStudio(input));
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else if (sub === 'set') {
    const { values, positionals, dataDir } = parse(rest, quotas, 1, HELP['studio set']!);
    const input = {
      quotaRecords: integer(values['quota-records'], 'quota-records', 0),
      quotaKvBytes: integer(values['quota-kv-bytes'], 'quota-kv-bytes', 0),
    };
    if (input.quotaRecords === undefined && input.quotaKvBytes === undefined) {
      throw new UsageError(`Nothing to change.\n\n${HELP['studio set']}`);
    }
    const out = withAdmin(dataDir, (admin) => admin.setStudio(positionals[0]!, input));
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    throw new UsageError(`Unknown studio command "${sub ?? ''}".\n\n${HELP['studio add']}\n\n${HELP['studio set']}`);
  }
}

function token(args: string[]): void {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values, dataDir } = parse(rest, { studio: { type: 'string' }, caps: { type: 'string' } }, 0, HELP['token create']!);
    if (typeof values.studio !== 'string') throw new UsageError(`--studio is required.\n\n${HELP['token create']}`);
    if (typeof values.caps !== 'string') throw new UsageError(`--caps is required.\n\n${HELP['token create']}`);
    const caps = values.caps.split(',').map((c) => c.trim()).filter(Boolean);
    if (caps.length === 0) throw new UsageError(`--caps needs at least one capability: ${CAPABILITIES.join(', ')}.`);
    const unknown = caps.filter((c) => !(CAPABILITIES as readonly string[]).includes(c));
    if (unknown.length > 0) throw new UsageError(`Unknown capabilities: ${unknown.join(', ')}. Known: ${CAPABILITIES.join(', ')}.`);
    const studioId = values.studio;
    const out = withAdmin(dataDir, (admin) => admin.createToken(studioId, caps));
    process.stdout.write(`${out}\n`);
  } else if (sub === 'revoke') {
    const { positionals, dataDir } = parse(rest, {}, 1, HELP['token revoke']!);
    const revoked = withAdmin(dataDir, (admin) => admin.revokeToken(positionals[0]!));
    if (!revoked) throw new Error('No live token or launcher credential matches; it is unknown or already revoked.');
    process.stderr.write(isLauncherCredential(positionals[0]!) ? 'Launcher credential revoked.\n' : 'Token revoked.\n');
  } else {
    throw new UsageError(`Unknown token command "${sub ?? ''}".\n\n${HELP['token create']}\n\n${HELP['token revoke']}`);
  }
}

function launcherToken(args: string[]): void {
  const { values, dataDir } = parse(
    args,
    { list: { type: 'boolean' }, json: { type: 'boolean' }, 'revoke-all': { type: 'boolean' } },
    0,
    HELP['launcher-token']!,
  );
  if (values.list && values['revoke-all']) throw new UsageError(`--list and --revoke-all do not go together.\n\n${HELP['launcher-token']}`);
  if (values.json && !values.list) throw new UsageError(`--json goes with --list.\n\n${HELP['launcher-token']}`);
  if (values.list) {
    const live = withAdmin(dataDir, (admin) => admin.listLauncherCredentials());
    process.stdout.write(values.json ? `${JSON.stringify(live)}\n` : credentialTable(live));
  } else if (values['revoke-all']) {
    const n = withAdmin(dataDir, (admin) => admin.revokeAllLauncherCredentials());
    process.stderr.write(`${n} launcher credential${n === 1 ? '' : 's'} revoked.\n`);
  } else {
    const credential = withAdmin(dataDir, (admin) => admin.createLauncherCredential());
    process.stdout.write(`${credential}\n`);
  }
}

/** `launcher-token --list` as a table; "none" when nothing is live. */
function credentialTable(rows: { id: string; kind: string; created_at: string; last_used_at: string | null; expires_at: string | null }[]): string {
  if (rows.length === 0) return 'No live launcher credentials.\n';
  const table = [
    ['ID', 'KIND', 'CREATED', 'LAST USED', 'EXPIRES'],
    ...rows.map((r) => [r.id, r.kind, r.created_at, r.last_used_at ?? '-', r.expires_at ?? 'when revoked']),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  return table.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

function index(args: string[]): void {
  const [sub, ...rest] = args;
  if (sub !== 'add') throw new UsageError(`Unknown index command "${sub ?? ''}".\n\n${HELP['index add']}`);
  const { values, dataDir } = parse(
    rest,
    { studio: { type: 'string' }, collection: { type: 'string' }, field: { type: 'string' } },
    0,
    HELP['index add']!,
  );
  for (const flag of ['studio', 'collection', 'field']) {
    if (typeof values[flag] !== 'string') throw new UsageError(`--${flag} is required.\n\n${HELP['index add']}`);
  }
  const input = { studioId: values.studio as string, collection: values.collection as string, field: values.field as string };
  const out = withAdmin(dataDir, (admin) => admin.addIndex(input));
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serve(rest);
      case 'studio':
        return studio(rest);
      case 'token':
        return token(rest);
      case 'index':
        return index(rest);
      case 'launcher-token':
        return launcherToken(rest);
      case 'login-url':
        return loginUrlCommand(rest);
      case 'install':
      case 'link':
      case 'start':
      case 'stop':
      case 'studios':
        return await launcherCommand(command, rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${HELP.main}\n`);
        if (command === undefined) process.exitCode = 2;
        return;
      default:
        throw new UsageError(`Unknown command "${command}".\n\n${HELP.main}`);
    }
  } catch (err) {
    process.stderr.write(`backlot: ${(err as Error).message}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}

if (require.main === module) void main(process.argv.slice(2));
