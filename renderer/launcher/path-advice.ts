/**
 * What the install field says about a path it cannot send (pure, so it is
 * tested as a table): the service installs from a full folder path only
 * (docs/api.md "POST /launcher/studios:install"), and a newcomer types what
 * the README shows, `examples/studios/sketchpad`. A path naming an example
 * that ships with Backlot is offered that example; any other relative path
 * is told what to type instead.
 */

export interface ExampleRef {
  id: string;
  name: string;
  source: string;
}

export type PathAdvice = { kind: 'ok' } | { kind: 'example'; example: ExampleRef; message: string } | { kind: 'relative'; message: string };

/** `/…`, `C:\…` or `\\server\…`: what the service takes as a full path. */
export function isFullPath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

export function pathAdvice(typed: string, examples: readonly ExampleRef[]): PathAdvice {
  const path = typed.trim();
  if (path === '' || isFullPath(path)) return { kind: 'ok' };
  const last = path.replace(/[\\/]+$/, '').split(/[\\/]/).pop() ?? '';
  const example = examples.find((e) => e.id === last && (path === last || /(^|[\\/])examples[\\/]studios[\\/][^\\/]+[\\/]?$/.test(path)));
  if (example) {
    return {
      kind: 'example',
      example,
      message: `“${path}” is the ${example.name} example that comes with Backlot. Install it with the button, or type its full path: ${example.source}`,
    };
  }
  const like = examples[0] ? examples[0].source : '/home/you/studios/my-studio';
  if (path.startsWith('~')) {
    return { kind: 'relative', message: `Backlot does not expand “~”. Type the full path of the folder that holds backlot.json, like ${like}` };
  }
  return { kind: 'relative', message: `Type the full path of the folder that holds backlot.json, starting with “/”, like ${like}` };
}
