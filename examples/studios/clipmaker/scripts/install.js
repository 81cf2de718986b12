// Install step "check" (backlot.json): makes sure this Node can run the
// studio. The server uses only Node's standard library (fetch, child_process),
// so there is nothing to install; the audio bed arrives by the manifest's
// download, after this step.
'use strict';

const MIN_MAJOR = 20;
const major = Number(process.versions.node.split('.')[0]);

console.log(`Clipmaker install check: node ${process.version} on ${process.platform}-${process.arch}`);
if (major < MIN_MAJOR) {
  console.error(`Clipmaker needs Node ${MIN_MAJOR} or later (global fetch); found ${process.version}.`);
  process.exit(1);
}
console.log('No dependencies to install: Clipmaker uses only the Node standard library.');
console.log('Rendering uses the ffmpeg Backlot passes as BACKLOT_FFMPEG (the one that comes with Backlot), never one from PATH.');
