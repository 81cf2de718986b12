import { requestRender, state } from '../state';

/** The visible status line (also read out); `notice` marks what the person must not miss (a refused or reloaded change). */
export function say(text: string, notice = false): void {
  state.status = { text, notice };
  requestRender('status');
}

export function showProblem(text: string | null, details: string[] = []): void {
  state.problem = text === null ? null : { text, details };
  requestRender('status');
}
