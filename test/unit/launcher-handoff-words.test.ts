import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accessWords, alwaysLabel, countWords, itemHandoffWords, refusalWords, requestTitle, stateWords, type AssetKind } from '../../renderer/launcher/handoffs/words';

/**
 * What a request card and an item's handoffs say (renderer/launcher/handoffs/words.ts):
 * tables of facts and the words a person reads.
 */

test('offered assets are counted by kind, in words', () => {
  const rows: [(AssetKind | null)[], string][] = [
    [['image'], '1 image'],
    [['image', 'image'], '2 images'],
    [['image', 'video', 'image'], '2 images and 1 video'],
    [['audio', 'video', 'image', 'other'], '1 image, 1 video, 1 sound and 1 file'],
    [[null, 'image'], '1 image and 1 file'],
    [['audio', 'audio'], '2 sounds'],
    [[], 'nothing'],
  ];
  for (const [kinds, words] of rows) assert.equal(countWords(kinds), words, JSON.stringify(kinds));
});

test('the access the recipient gains, with and without a session', () => {
  const rows: [Parameters<typeof accessWords>[0], string][] = [
    [{ from: 'Sketchpad', to: 'Clipmaker', kinds: ['image'], session: null }, 'Clipmaker will be able to read 1 image from Sketchpad.'],
    [
      { from: 'Sketchpad', to: 'Clipmaker', kinds: ['image', 'image'], session: { name: 'Evening' } },
      'Clipmaker will be able to read 2 images from Sketchpad and get its own copy of the session “Evening”.',
    ],
    [
      { from: 'Sketchpad', to: 'Clipmaker', kinds: ['video'], session: { name: null } },
      'Clipmaker will be able to read 1 video from Sketchpad and get its own copy of one of its sessions.',
    ],
  ];
  for (const [facts, words] of rows) assert.equal(accessWords(facts), words);
});

test('titles, the always button and states', () => {
  assert.equal(requestTitle('Sketchpad', 'Clipmaker', 'Sunset'), 'Sketchpad wants to send “Sunset” to Clipmaker');
  assert.equal(requestTitle('Sketchpad', 'Clipmaker', null), 'Sketchpad wants to send work to Clipmaker');
  assert.equal(alwaysLabel('Sketchpad', 'Clipmaker'), 'Always allow from Sketchpad to Clipmaker');
  const states: [Parameters<typeof stateWords>[0], string][] = [
    ['pending', 'waiting for your answer'],
    ['approved', 'allowed, not opened yet'],
    ['accepted', 'received'],
    ['declined', 'declined'],
    ['withdrawn', 'withdrawn by Sketchpad'],
    ['expired', 'expired (not answered within 24 hours)'],
  ];
  for (const [state, words] of states) assert.equal(stateWords(state, 'Sketchpad'), words);
  assert.equal(itemHandoffWords('Sketchpad', 'Clipmaker', 'accepted'), 'From Sketchpad to Clipmaker: received');
});

test('refusals in words', () => {
  const rows: [Parameters<typeof refusalWords>[0], string][] = [
    [{ status: 409, code: 'conflict', message: 'x' }, 'This request was already answered or withdrawn.'],
    [{ status: 409, code: 'not_installed', message: 'x' }, 'Clipmaker is no longer installed, so it cannot receive this.'],
    [{ status: 404, code: 'not_found', message: 'x' }, 'This request no longer exists.'],
    [{ status: 0, code: 'unreachable', message: 'Backlot is not answering.' }, 'Backlot is not answering.'],
    [{ status: 500, code: 'internal', message: 'Something broke.' }, 'Something broke.'],
  ];
  for (const [r, words] of rows) assert.equal(refusalWords(r, 'Clipmaker'), words, r.code);
});
