/**
 * Splits a manifest's command text (a step's `run`, the start command;
 * docs/studios.md, "Commands: how `run` is split") into an argument vector for the runner, the way a POSIX shell
 * splits words, and nothing more: no variables, globs, pipes or `&&`. Pure.
 *
 * - Words are separated by unquoted blanks (space, tab, newline).
 * - 'single quotes' keep everything literally; "double quotes" keep
 *   everything but `\"` and `\\`; outside quotes a backslash keeps the next
 *   character.
 * - An unquoted shell operator or expansion character (| & ; < > ( ) $ ` * ? [ ] { } ~ #)
 *   is refused, so a command written for a shell fails loudly instead of
 *   running with the operator as an argument. Quote it to pass it literally.
 *   (A caller substituting its own placeholder such as `{port}` does so first.)
 */

export class CommandSyntaxError extends Error {
  override name = 'CommandSyntaxError';
}

const OPERATORS = new Set([...'|&;<>()$`*?[]{}~#']);

export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (ch === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) throw new CommandSyntaxError(`Unterminated ' quote at character ${i + 1}.`);
      word += text.slice(i + 1, close);
      i = close;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && (text[j + 1] === '"' || text[j + 1] === '\\')) j++;
        word += text[j];
      }
      if (j >= text.length) throw new CommandSyntaxError(`Unterminated " quote at character ${i + 1}.`);
      i = j;
    } else if (ch === '\\') {
      if (i + 1 >= text.length) throw new CommandSyntaxError('A backslash ends the command.');
      word += text[++i];
    } else if (OPERATORS.has(ch)) {
      throw new CommandSyntaxError(
        `"${ch}" at character ${i + 1} is shell syntax; commands run without a shell (quote it to pass it literally).`,
      );
    } else {
      word += ch;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new CommandSyntaxError('The command is empty.');
  return words;
}

/** The Node a command word `node` runs: Backlot's own (docs/studios.md, "The runtime a studio gets"). */
export interface OwnNode {
  /** The executable: `process.execPath`, the Electron binary inside the desktop app. */
  execPath: string;
  /** Inside Electron the binary is Node only with `ELECTRON_RUN_AS_NODE=1` in its environment. */
  electron: boolean;
}

export function ownNode(): OwnNode {
  return { execPath: process.execPath, electron: process.versions.electron !== undefined };
}

/**
 * A command whose program word is exactly `node` (or `node.exe`) runs
 * Backlot's own Node instead of whatever `node` the PATH holds (a packaged
 * app may run where no Node is installed, or with no PATH at all when started
 * from a file manager). Only the program word: an argument `node` stays as it
 * is, and so do `npm`, `npx` and a path such as `./node`. Pure.
 */
export function withOwnNode<E extends NodeJS.ProcessEnv>(
  argv: readonly string[],
  env: E,
  node: OwnNode = ownNode(),
): { argv: string[]; env: E } {
  const [program, ...args] = argv;
  if (program !== 'node' && program !== 'node.exe') return { argv: [...argv], env };
  return {
    argv: [node.execPath, ...args],
    env: node.electron ? { ...env, ELECTRON_RUN_AS_NODE: '1' } : env,
  };
}
