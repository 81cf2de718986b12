/**
 * Building DOM without HTML strings: every text goes through a text node, so
 * nothing a studio stored (a title, a tag, a log line) can become markup.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = String(value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** Announces a message to screen readers and shows it in the status line. */
export function announce(text: string): void {
  const region = document.getElementById('announcer');
  if (region) region.textContent = text;
}

/**
 * Renders `items` into `list` as one child each, keyed by `key` (a `data-key`
 * attribute). A focused control in a row gets its focus back in the row's new
 * node (matched by its `data-focus` attribute, else the row itself), so live
 * updates never throw a keyboard user's focus away.
 */
export function renderKeyed<T>(list: Element, items: T[], key: (item: T) => string, render: (item: T) => HTMLElement): void {
  const active = document.activeElement;
  const focusRow = active && list.contains(active) ? active.closest('[data-key]')?.getAttribute('data-key') : null;
  const focusName = active instanceof HTMLElement ? active.dataset.focus : undefined;
  const rows = items.map((item) => {
    const el = render(item);
    el.dataset.key = key(item);
    return el;
  });
  list.replaceChildren(...rows);
  if (focusRow && focusName) {
    const row = rows.find((r) => r.dataset.key === focusRow);
    const target = row?.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusName)}"]`);
    if (target && !target.hasAttribute('disabled')) target.focus();
    else row?.focus();
  }
}
