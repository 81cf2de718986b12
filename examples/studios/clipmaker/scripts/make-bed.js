// Writes media/bed.wav: the soft audio bed under every clip.
// 2 s, mono, 16-bit PCM, 22050 Hz: a quiet A3 + E4 chord that swells in and
// out. Both tones complete whole cycles in 2 s and the swell is 0 at both
// ends, so the file loops without a click (ffmpeg loops it with -stream_loop).
//
//   node scripts/make-bed.js        # writes media/bed.wav, prints its sha256
//
// The sha256 printed must match "download[0].sha256" in backlot.json.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const RATE = 22050;
const SECONDS = 2;
const TONES = [220, 330]; // Hz; whole cycles in SECONDS
const PEAK = 0.25; // of full scale: a bed, not a beep

const frames = RATE * SECONDS;
const data = Buffer.alloc(frames * 2);
for (let i = 0; i < frames; i++) {
  const t = i / RATE;
  const swell = Math.sin((Math.PI * i) / frames) ** 2;
  const tone = TONES.reduce((sum, f) => sum + Math.sin(2 * Math.PI * f * t), 0) / TONES.length;
  data.writeInt16LE(Math.round(tone * swell * PEAK * 32767), i * 2);
}

// The canonical 44-byte RIFF/WAVE header for PCM.
const header = Buffer.alloc(44);
header.write('RIFF', 0, 'ascii');
header.writeUInt32LE(36 + data.length, 4);
header.write('WAVE', 8, 'ascii');
header.write('fmt ', 12, 'ascii');
header.writeUInt32LE(16, 16); // fmt chunk size
header.writeUInt16LE(1, 20); // PCM
header.writeUInt16LE(1, 22); // mono
header.writeUInt32LE(RATE, 24);
header.writeUInt32LE(RATE * 2, 28); // byte rate
header.writeUInt16LE(2, 32); // block align
header.writeUInt16LE(16, 34); // bits per sample
header.write('data', 36, 'ascii');
header.writeUInt32LE(data.length, 40);

const wav = Buffer.concat([header, data]);
const out = path.join(__dirname, '..', 'media', 'bed.wav');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, wav);
console.log(`wrote ${path.relative(process.cwd(), out)} (${wav.length} bytes)`);
console.log(`sha256 ${crypto.createHash('sha256').update(wav).digest('hex')}`);
