import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The top of a V8 CPU profile (`node --cpu-prof`) as a self-time table: the
 * functions the samples landed in, summed by name and place, heaviest first.
 * `(program)` and `(garbage collector)` are V8's own rows; native calls
 * (SQLite through better-sqlite3, the socket writes) show as the JS
 * function that called them. Idle samples are left out.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  micros: number;
  share: number;
}

/** Self time per function of one profile, heaviest first. */
export function selfTimes(profile: CpuProfile): SelfTime[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const micros = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    const key = label(node);
    // Waiting for the next event is not CPU: shares are of the time the process ran.
    if (key === '(idle)') return;
    micros.set(key, (micros.get(key) ?? 0) + delta);
    total += delta;
  });
  return [...micros.entries()]
    .map(([name, us]) => ({ name, micros: us, share: total > 0 ? us / total : 0 }))
    .sort((a, b) => b.micros - a.micros);
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const short = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '');
  return `${name} ${short}:${lineNumber + 1}`;
}

/** The newest `.cpuprofile` in a folder. */
export function newestProfile(dir: string): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort();
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  return join(dir, files[files.length - 1]!);
}

/** The top `rows` of a profile file, with µs per request when the request count is known. */
export function profileTable(file: string, rows: number, requests?: number): string {
  const times = selfTimes(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const lines = ['self %   µs/req  function'];
  for (const t of times.slice(0, rows)) {
    const perRequest = requests ? (t.micros / requests).toFixed(1) : '-';
    lines.push(`${(t.share * 100).toFixed(1).padStart(5)}  ${perRequest.padStart(7)}  ${t.name}`);
  }
  return lines.join('\n');
}

if (require.main === module) {
  const [file, rows] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('Usage: node dist/bench/profile.js FILE.cpuprofile [ROWS]\n');
    process.exit(2);
  }
  console.log(profileTable(file, Number(rows ?? 25)));
}
