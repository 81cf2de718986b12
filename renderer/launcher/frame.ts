/**
 * The launcher page's rendering rhythm: changes are recorded in state as they arrive and
 * the DOM is brought up to date at most once per animation frame (renderer/README.md "Launcher: jobs and disk"),
 * so a burst of events costs one render, not one per event. A hidden page renders nothing
 * until it is shown again (browsers pause animation frames there), and then only once.
 */
export function frameScheduler(render: () => void): () => void {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      render();
    });
  };
}

/**
 * Makes `parent`'s children exactly `wanted`, in order, touching only what differs: nodes
 * no longer wanted are removed first, then each wanted node out of place is inserted
 * where it belongs (a new row at the top is one insertion; rows already in order are not
 * moved). A control that had the focus and was moved gets it back.
 */
export function syncChildren(parent: Element, wanted: readonly Node[]): void {
  const active = document.activeElement;
  const hadFocus = active instanceof HTMLElement && parent.contains(active) ? active : null;
  const keep = new Set(wanted);
  for (let node = parent.firstChild; node; ) {
    const next = node.nextSibling;
    if (!keep.has(node)) node.remove();
    node = next;
  }
  let cursor = parent.firstChild;
  for (const node of wanted) {
    if (node === cursor) {
      cursor = cursor.nextSibling;
      continue;
    }
    parent.insertBefore(node, cursor);
  }
  if (hadFocus && hadFocus.isConnected && document.activeElement !== hadFocus) hadFocus.focus({ preventScroll: true });
}

/** Sets an element's text only when it differs (no mutation, no layout work, for an unchanged value). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets (or, for null, removes) an attribute only when it differs. */
export function setAttr(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
