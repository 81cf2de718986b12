import { request } from 'node:http';

/**
 * A child process of the jobs bench: opens N server-sent event streams on
 * one job's log and measures, for every line on every stream, the time from
 * the appender's timestamp (in the line text) to its arrival. Reports a
 * 0.1 ms histogram to the parent over IPC.
 *
 * argv: PORT PATH TOKEN COUNT
 */

const [port, path, token, countText] = process.argv.slice(2);
const count = Number(countText);
const BUCKET_MS = 0.1;
const BUCKETS = 600_000; // 60 s
const histogram = new Uint32Array(BUCKETS);
let lines = 0;
let ended = 0;
let opened = 0;
let failed = '';

const now = () => performance.timeOrigin + performance.now();

function connect(): void {
  const req = request({
    host: '127.0.0.1',
    port: Number(port),
    path,
    agent: false,
    headers: { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
  });
  req.on('error', (err) => {
    failed ||= err.message;
    finish();
  });
  req.on('response', (res) => {
    if (res.statusCode !== 200) {
      failed ||= `status ${res.statusCode}`;
      res.resume();
      return;
    }
    let first = true;
    let rest = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (first) {
        first = false;
        if (++opened === count) process.send!({ type: 'ready' });
      }
      const arrived = now();
      const text = rest + chunk;
      let start = 0;
      for (let i = text.indexOf('\n\n'); i !== -1; i = text.indexOf('\n\n', start)) {
        const frame = text.slice(start, i);
        start = i + 2;
        if (frame.startsWith('event: line')) {
          const t = frame.indexOf('"text":"t=');
          const sent = Number(frame.slice(t + 10, frame.indexOf(' ', t + 10)));
          const bucket = Math.min(BUCKETS - 1, Math.max(0, Math.floor((arrived - sent) / BUCKET_MS)));
          histogram[bucket]! += 1;
          lines += 1;
        } else if (frame.startsWith('event: end')) {
          ended += 1;
        }
      }
      rest = text.slice(start);
    });
    res.on('end', finish);
  });
  req.end();
}

let finished = 0;
function finish(): void {
  if (++finished < count) return;
  const buckets: [number, number][] = [];
  histogram.forEach((n, i) => {
    if (n > 0) buckets.push([i, n]);
  });
  process.send!({ type: 'done', lines, ended, failed, buckets, bucketMs: BUCKET_MS }, () => process.exit(0));
}

for (let i = 0; i < count; i++) connect();
