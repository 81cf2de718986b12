// Install step "prepare" (backlot.json): runs once in the installed app folder.
// It writes state/installed.json and prints a few lines, so the launcher's
// install log has something to show.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'backlot.json'), 'utf8'));

console.log(`Preparing ${manifest.name} ${manifest.version} (node ${process.version})`);

const stateDir = path.join(root, 'state');
fs.mkdirSync(stateDir, { recursive: true });
const record = { version: manifest.version, installed_at: new Date().toISOString() };
fs.writeFileSync(path.join(stateDir, 'installed.json'), JSON.stringify(record, null, 2) + '\n');

console.log(`Wrote state/installed.json (installed_at ${record.installed_at})`);
console.log('Sketchpad is ready to start.');
