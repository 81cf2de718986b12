import { ApiFailure } from '../lib/api';
import { h } from '../lib/dom';

/** The page's one place for a failed action's message (an alert above the panels, never a toast). */
export const problem = h('p', { class: 'problem', role: 'alert', hidden: true });

export function showProblem(err: unknown): void {
  problem.hidden = false;
  problem.textContent = err instanceof ApiFailure ? `${err.message} (${err.code})` : String(err);
}

export function clearProblem(): void {
  problem.hidden = true;
  problem.textContent = '';
}

/** Runs an action from a button: disabled while it runs, its failure shown in place. */
export async function act(button: HTMLButtonElement, work: () => Promise<unknown>): Promise<void> {
  button.disabled = true;
  clearProblem();
  try {
    await work();
  } catch (err) {
    showProblem(err);
  } finally {
    button.disabled = false;
  }
}
