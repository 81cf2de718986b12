/**
 * Lineage by the letter of the contract, in plain TypeScript, to check the
 * recursive SQL against (docs/api.md "Lineage"):
 *
 * - upstream of an item: the items whose asset is one of its inputs, then the
 *   items whose asset is one of those items' inputs, and so on;
 * - downstream of an asset: the items that took it as an input, then the
 *   items that took one of those items' assets as an input, and so on;
 * - the walk passes through every item (other studios', soft-deleted ones);
 *   a page shows only live items of the viewer's studio (any studio with
 *   read_all); each item once; never the item or the asset the walk starts
 *   from (downstream: no item whose own asset is the start asset);
 * - newest first: seq descending.
 */

export interface OracleItem {
  seq: number;
  studio: string;
  asset: string;
  deleted: boolean;
  inputs: string[];
}

export interface OracleViewer {
  studioId: string;
  readAll: boolean;
}

export class LineageOracle {
  private readonly bySeq = new Map<number, OracleItem>();
  /** asset -> items whose output it is */
  private readonly producers = new Map<string, OracleItem[]>();
  /** asset -> items that took it as an input */
  private readonly consumers = new Map<string, OracleItem[]>();

  constructor(items: readonly OracleItem[]) {
    for (const item of items) {
      this.bySeq.set(item.seq, item);
      push(this.producers, item.asset, item);
      for (const input of new Set(item.inputs)) push(this.consumers, input, item);
    }
  }

  /** Seqs of the upstream page set of item `seq`, newest first. */
  up(seq: number, viewer: OracleViewer): number[] {
    const start = this.bySeq.get(seq)!;
    const reached = new Set<OracleItem>();
    const queue = [start];
    while (queue.length > 0) {
      const item = queue.shift()!;
      for (const input of item.inputs) {
        for (const producer of this.producers.get(input) ?? []) {
          if (reached.has(producer)) continue;
          reached.add(producer);
          queue.push(producer);
        }
      }
    }
    return shown([...reached].filter((i) => i !== start), viewer);
  }

  /** Seqs of the downstream page set of `asset`, newest first. */
  down(asset: string, viewer: OracleViewer): number[] {
    const reached = new Set<OracleItem>();
    const queue = [...(this.consumers.get(asset) ?? [])];
    for (const item of queue) reached.add(item);
    while (queue.length > 0) {
      const item = queue.shift()!;
      for (const consumer of this.consumers.get(item.asset) ?? []) {
        if (reached.has(consumer)) continue;
        reached.add(consumer);
        queue.push(consumer);
      }
    }
    return shown([...reached].filter((i) => i.asset !== asset), viewer);
  }
}

function shown(items: OracleItem[], viewer: OracleViewer): number[] {
  return items
    .filter((i) => !i.deleted && (viewer.readAll || i.studio === viewer.studioId))
    .map((i) => i.seq)
    .sort((a, b) => b - a);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
