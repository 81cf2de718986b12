import { request } from 'node:http';
import { resolve } from 'node:path';
import { openAdmin, runningServer } from '../service/admin';

/**
 * The launcher without a UI (README.md "The CLI"): `install`, `link`, `start`, `stop`,
 * `studios` talk to the running server of a data dir. The CLI finds it
 * through the server file (as `login-url` does), mints a launcher credential
 * through the data dir for this one command and revokes it when done. A
 * step's output is shown as it comes; a failed job exits 1.
 */

export class NoServerError extends Error {}

interface Reply {
  status: number;
  json: any;
}

export async function withServer<T>(dataDir: string, fn: (call: Caller) => Promise<T>): Promise<T> {
  const info = runningServer(dataDir);
  if (!info) throw new NoServerError(`No Backlot server is running on ${dataDir}. Start one with 'backlot serve'.`);
  const admin = openAdmin(dataDir);
  const credential = admin.createLauncherCredential('command');
  try {
    return await fn(new Caller(info.port, credential));
  } finally {
    admin.revokeToken(credential);
    admin.close();
  }
}

export class Caller {
  constructor(
    readonly port: number,
    private readonly credential: string,
  ) {}

  call(method: string, path: string, body?: unknown): Promise<Reply> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolveReply, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          method,
          path: `/api/v1${path}`,
          headers: {
            Authorization: `Bearer ${this.credential}`,
            ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolveReply({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Calls and throws the error body's message on a status of 400 or more. */
  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await this.call(method, path, body);
    if (r.status >= 400) {
      const details = r.json?.details && Object.keys(r.json.details).length > 0 ? ` ${JSON.stringify(r.json.details)}` : '';
      throw new Error(`${r.json?.code ?? r.status}: ${r.json?.message ?? 'request failed'}${details}`);
    }
    return r.json;
  }

  /** Prints a job's log as it comes (step headers and lines) and resolves with its end state. */
  followLog(jobId: string, out: (text: string) => void): Promise<{ state: string; last_error: string | null }> {
    return new Promise((resolveEnd, reject) => {
      const req = request(
        { host: '127.0.0.1', port: this.port, path: `/api/v1/launcher/jobs/${jobId}/logs`, headers: { Authorization: `Bearer ${this.credential}` } },
        (res) => {
          let buffer = '';
          let end: { state: string; last_error: string | null } | null = null;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let cut;
            while ((cut = buffer.indexOf('\n\n')) !== -1) {
              const frame = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              const event = /^event: (.*)$/m.exec(frame)?.[1];
              const data = frame
                .split('\n')
                .filter((l) => l.startsWith('data: '))
                .map((l) => l.slice(6))
                .join('\n');
              if (!event || !data) continue;
              const value = JSON.parse(data);
              if (event === 'step') out(`==> ${value.step}\n`);
              else if (event === 'line') out(`${value.text}\n`);
              else if (event === 'end') end = value;
            }
          });
          res.on('end', () => (end ? resolveEnd(end) : reject(new Error('The log stream ended before the job did.'))));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }
}

const LIFECYCLE = new Set(['install', 'build', 'download']);

/** install / link: the install job, then the build and download jobs that follow it, each shown as it runs. */
export async function installCommand(call: Caller, source: string, link: boolean, out: (t: string) => void): Promise<boolean> {
  const job = await call.ok('POST', `/launcher/studios:${link ? 'link' : 'install'}`, { source: resolve(source) });
  const studio = job.studio_id as string;
  out(`${link ? 'Linking' : 'Installing'} ${studio} (job ${job.id})\n`);
  const seen = new Set<string>();
  let next: any = job;
  for (;;) {
    seen.add(next.id);
    const end = await call.followLog(next.id, out);
    if (end.state !== 'succeeded') {
      out(`${next.kind} ${end.state}${end.last_error ? `: ${end.last_error}` : ''}\n`);
      return false;
    }
    // The next phase's job appears once this one's end is handled: wait for it or for the final state.
    next = null;
    for (let i = 0; i < 100 && next === null; i++) {
      const page = await call.ok('GET', `/launcher/jobs?studio=${studio}&limit=10`);
      next = page.items.find((j: any) => !seen.has(j.id) && LIFECYCLE.has(j.kind) && j.id > job.id) ?? null;
      if (next) break;
      const s = await call.ok('GET', `/launcher/studios/${studio}`);
      if (s.state !== 'installing') {
        out(s.state === 'installed' ? `${studio} ${s.version} is installed.\n` : `${studio}: ${s.state}${s.last_error ? `: ${s.last_error}` : ''}\n`);
        return s.state === 'installed';
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (next === null) throw new Error('The install did not finish in time.');
  }
}

/** start: waits until the studio is running (or failed). */
export async function startCommand(call: Caller, id: string, out: (t: string) => void): Promise<boolean> {
  let s = await call.ok('POST', `/launcher/studios/${id}:start`);
  out(`Starting ${id} on port ${s.port}...\n`);
  while (s.state === 'starting') {
    await new Promise((r) => setTimeout(r, 200));
    s = await call.ok('GET', `/launcher/studios/${id}`);
  }
  if (s.state === 'running') {
    out(`${id} is running: ${s.origin}/\n`);
    return true;
  }
  out(`${id} did not start: ${s.last_error ?? s.state}\n`);
  return false;
}

export function studiosTable(items: any[]): string {
  if (items.length === 0) return 'No studio is installed.\n';
  const rows = items.map((s) => [s.id, s.version, s.state + (s.heavy ? ' (heavy)' : ''), s.port ? String(s.port) : '-', s.origin + '/']);
  const head = ['ID', 'VERSION', 'STATE', 'PORT', 'ORIGIN'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}
