// Runs ffmpeg for one clip: a lavfi test pattern with the audio bed under it,
// H.264 + AAC in MP4, 640x360 at 30 fps. ffmpeg is spawned with an argv array
// (never a shell) and reports progress on stdout (`-progress pipe:1`).
'use strict';

const { spawn } = require('node:child_process');

const PATTERNS = ['testsrc2', 'smptebars', 'mandelbrot', 'rgbtestsrc'];
const WIDTH = 640;
const HEIGHT = 360;
const FPS = 30;

function ffmpegArgs({ pattern, seconds, bed, out }) {
  return [
    '-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', '-y',
    '-progress', 'pipe:1',
    '-f', 'lavfi', '-i', `${pattern}=size=${WIDTH}x${HEIGHT}:rate=${FPS}`,
    // Loop the 2 s bed forever; -t below cuts both streams to length.
    '-stream_loop', '-1', '-i', `file:${bed}`,
    '-map', '0:v:0', '-map', '1:a:0',
    '-t', String(seconds),
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-r', String(FPS),
    '-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2',
    // moov atom first, so the page's <video> can start playing before the whole file arrived.
    '-movflags', '+faststart',
    '-f', 'mp4', `file:${out}`,
  ];
}

/**
 * Starts ffmpeg. Returns {args, done, kill}; `done` resolves to
 * {code, signal, errors} once ffmpeg has exited (it never rejects).
 * onProgress(ms) is called with the rendered output time in milliseconds;
 * onLine(text) with every line ffmpeg writes to stderr.
 */
function startRender({ ffmpeg, pattern, seconds, bed, out, onProgress, onLine }) {
  const args = ffmpegArgs({ pattern, seconds, bed, out });
  const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const errors = [];

  eachLine(child.stdout, (line) => {
    // `out_time_us` is microseconds (`out_time_ms` is too, despite its name).
    const m = /^out_time_us=(\d+)$/.exec(line);
    if (m) onProgress(Math.round(Number(m[1]) / 1000));
  });
  eachLine(child.stderr, (line) => {
    errors.push(line);
    if (errors.length > 20) errors.shift();
    onLine(line);
  });

  const done = new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: null, signal: null, errors: [err.message] }));
    child.on('close', (code, signal) => resolve({ code, signal, errors }));
  });

  let killTimer = null;
  done.then(() => clearTimeout(killTimer));
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), 2000);
  };
  return { args, done, kill };
}

function eachLine(stream, fn) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split(/\r?\n|\r/);
    rest = lines.pop();
    for (const line of lines) if (line.trim()) fn(line.trim());
  });
  stream.on('end', () => rest.trim() && fn(rest.trim()));
}

module.exports = { startRender, ffmpegArgs, PATTERNS, WIDTH, HEIGHT, FPS };
