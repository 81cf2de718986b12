import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

/**
 * The repository explains itself: code, tests and docs cite only the project's own
 * documentation (docs/api.md, docs/openapi.json, docs/security.md, docs/reliability.md,
 * docs/studios.md, docs/design.md, bench/README.md and the READMEs), never a document
 * someone who clones the repository does not have (docs/design.md, "The repository's
 * own docs carry every rule"). Pure: reads the files, runs nothing.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const SELF = 'test/references.test.ts';

/** What is scanned: these folders (whole) and files, from the repository root. */
const PLACES = ['service', 'main', 'renderer', 'cli', 'bench', 'test', 'docs', 'tools', 'examples', 'bin', 'README.md'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'test-results', '.git']);
const TEXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|json|md|css|html|yml|yaml|sh|txt)$|^[^.]+$/;

/** References to documents outside the repository, each with what it catches. */
export const OUTSIDE: { name: string; pattern: RegExp }[] = [
  { name: 'the decisions document', pattern: /decisions(\.md)?\s*§|decisions\.md/i },
  { name: 'the interface document', pattern: /interface(\.md)?\s*§|interface\.md/i },
  { name: 'the style guide', pattern: /style\.md/i },
  { name: 'the UI notes', pattern: /ui-anchors/i },
  { name: 'the shared folder beside the repository', pattern: /\.\.\/shared\/|shared\/spec/i },
  { name: 'a spec section', pattern: /\bspec\s*§|\bthe spec\b|\bspec text\b/i },
  { name: 'an issue number', pattern: /\bissues?\s*#?\d+/i },
  { name: 'a numbered section sign (other than an RFC section)', pattern: /(?<!\bRFC \d{3,5} )§\s*\d/ },
  { name: 'a turn of the project', pattern: /\bturn\s+\d+\b/i },
];

function* files(place: string): Generator<string> {
  const abs = path.join(ROOT, place);
  if (!existsSync(abs)) return;
  if (statSync(abs).isFile()) {
    yield place;
    return;
  }
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* files(`${place}/${entry.name}`);
    } else if (entry.isFile() && TEXT.test(entry.name)) {
      yield `${place}/${entry.name}`;
    }
  }
}

/** Every `file:line: text (what)` that cites a document outside the repository. */
export function outsideReferences(): string[] {
  const found: string[] = [];
  for (const place of PLACES) {
    for (const file of files(place)) {
      if (file === SELF) continue;
      const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        const what = OUTSIDE.filter(({ pattern }) => pattern.test(line)).map(({ name }) => name);
        if (what.length > 0) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)} (${what.join('; ')})`);
      });
    }
  }
  return found;
}

describe('references to documents outside the repository', () => {
  test('the patterns catch what they are for and pass what they are not', () => {
    const caught = (line: string) => OUTSIDE.some(({ pattern }) => pattern.test(line));
    for (const line of [
      '// 404 first (decisions §11)',
      '/** interface.md §Records */',
      'Contract: interface §Timeline rule 9',
      '(style.md practice 1)',
      'ui-anchors lesson 8',
      'see ../shared/spec/decisions.md',
      'the spec says so',
      'issue 17 item 3',
      '(Issue #15)',
      'issues 3 and 4',
      'as §4 says',
      'Turn 3: the browser credential',
    ]) {
      assert.ok(caught(line), `not caught: ${line}`);
    }
    for (const line of [
      'the error answer keeps it (RFC 9110 §15.5.17)',
      'docs/api.md §Media URLs',
      'docs/api.md "Order of checks"',
      'return 0;',
      'function runJob(spec: RunJobSpec)',
      'an issue with the body',
      'see docs/design.md',
    ]) {
      assert.ok(!caught(line), `caught, but fine: ${line}`);
    }
  });

  test('no file cites a document outside the repository', () => {
    const found = outsideReferences();
    assert.deepEqual(found, [], `${found.length} references to documents outside the repository:\n${found.join('\n')}`);
  });
});
