/**
 * What a handoff means, in words (pure; test/unit/launcher-handoff-words.test.ts).
 * A request card says who offers what to whom and exactly which access the
 * recipient gains, so the person approves a sentence, not an id
 * (renderer/README.md "Launcher: requests and permissions").
 */

export type AssetKind = 'image' | 'video' | 'audio' | 'other';
export type HandoffState = 'pending' | 'approved' | 'accepted' | 'declined' | 'withdrawn' | 'expired';

const NOUNS: Record<AssetKind, [string, string]> = {
  image: ['image', 'images'],
  video: ['video', 'videos'],
  audio: ['sound', 'sounds'],
  other: ['file', 'files'],
};

/** "1 image", "2 images and 1 video", "3 images, 1 video and 2 sounds"; kinds not known yet count as files. */
export function countWords(kinds: readonly (AssetKind | null)[]): string {
  const counts = new Map<AssetKind, number>();
  for (const k of kinds) counts.set(k ?? 'other', (counts.get(k ?? 'other') ?? 0) + 1);
  const parts = (['image', 'video', 'audio', 'other'] as const)
    .filter((k) => counts.has(k))
    .map((k) => {
      const n = counts.get(k)!;
      return `${n} ${NOUNS[k][n === 1 ? 0 : 1]}`;
    });
  if (parts.length === 0) return 'nothing';
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

export interface AccessFacts {
  from: string;
  to: string;
  kinds: readonly (AssetKind | null)[];
  /** The offered session, if any: its name when known, else null. */
  session: { name: string | null } | null;
}

/**
 * The access the recipient gains once it accepts: "Clipmaker will be able to read 1 image from
 * Sketchpad and get its own copy of the session “Evening”."
 */
export function accessWords(f: AccessFacts): string {
  let s = `${f.to} will be able to read ${countWords(f.kinds)} from ${f.from}`;
  if (f.session) s += f.session.name ? ` and get its own copy of the session “${f.session.name}”` : ' and get its own copy of one of its sessions';
  return `${s}.`;
}

/** The heading of a request card: "Sketchpad wants to send “Sunset” to Clipmaker". */
export function requestTitle(from: string, to: string, what: string | null): string {
  return what ? `${from} wants to send “${what}” to ${to}` : `${from} wants to send work to ${to}`;
}

export function alwaysLabel(from: string, to: string): string {
  return `Always allow from ${from} to ${to}`;
}

/** A handoff's state as a person says it. */
export function stateWords(state: HandoffState, from: string): string {
  switch (state) {
    case 'pending':
      return 'waiting for your answer';
    case 'approved':
      return 'allowed, not opened yet';
    case 'accepted':
      return 'received';
    case 'declined':
      return 'declined';
    case 'withdrawn':
      return `withdrawn by ${from}`;
    case 'expired':
      return 'expired (not answered within 24 hours)';
  }
}

/** One line of an item's handoffs: "To Clipmaker: received". */
export function itemHandoffWords(from: string, to: string, state: HandoffState): string {
  return `From ${from} to ${to}: ${stateWords(state, from)}`;
}

export interface Refusal {
  status: number;
  code: string;
  message: string;
}

/** A refused answer to the card's buttons, in words; the code stays on the details line. */
export function refusalWords(r: Refusal, to: string): string {
  if (r.status === 409 && r.code === 'conflict') return 'This request was already answered or withdrawn.';
  if (r.code === 'not_installed') return `${to} is no longer installed, so it cannot receive this.`;
  if (r.status === 404) return 'This request no longer exists.';
  return r.message;
}
