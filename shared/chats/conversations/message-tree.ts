import type { MessageType } from '../schemas.ts';

// A chat's messages form a tree (docs/DECISIONS.md, Conversations as trees): each message names
// the one it follows (`parentId`, null at the root). An edit is a new prompt under an earlier
// prompt's parent, a regenerated reply a new child of the same prompt; a branch is the path from
// the root to a leaf. Messages stored before the tree have no parentId: each follows the message
// before it in sequence order, so an old chat reads as the one branch it always was.

/** What the tree needs of a message (the partition is read with this projection). */
export interface MessageNode {
  id: string;
  /** null: a root. undefined: stored before the tree (follows the previous message). */
  parentId?: string | null;
  sequenceNumber: number;
  messageType: MessageType;
  type: string;
}

export class MessageTree {
  private readonly byId = new Map<string, MessageNode & { parentId: string | null }>();
  private readonly children = new Map<string | null, string[]>();

  /** `nodes` in sequence order. */
  constructor(nodes: readonly MessageNode[]) {
    let previous: string | null = null;
    for (const node of nodes) {
      const parentId = node.parentId === undefined ? previous : node.parentId;
      this.byId.set(node.id, { ...node, parentId });
      const siblings = this.children.get(parentId) ?? [];
      siblings.push(node.id);
      this.children.set(parentId, siblings);
      previous = node.id;
    }
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string) {
    return this.byId.get(id);
  }

  /** Every message's sequence number, in sequence order (every branch). */
  sequenceNumbers(): number[] {
    return [...this.byId.values()].map((n) => n.sequenceNumber);
  }

  /** The messages that follow the same parent, in creation order, itself included. */
  siblingIds(id: string): string[] {
    const node = this.byId.get(id);
    return node ? [...(this.children.get(node.parentId) ?? [])] : [];
  }

  /**
   * The newest message at or below `id` (the highest sequence number in its subtree): a branch
   * chosen by one of its messages runs on to the newest message under it.
   */
  newestUnder(id: string): string {
    let newest = id;
    const pending = [id];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      if (this.byId.get(next)!.sequenceNumber > this.byId.get(newest)!.sequenceNumber) newest = next;
      pending.push(...(this.children.get(next) ?? []));
    }
    return newest;
  }

  /** The leaf of the active branch: the chat's choice when it is in the tree, else the newest message. */
  activeLeaf(activeLeafId: string | undefined): string | undefined {
    if (activeLeafId && this.byId.has(activeLeafId)) return this.newestUnder(activeLeafId);
    let newest: MessageNode | undefined;
    for (const node of this.byId.values()) if (!newest || node.sequenceNumber > newest.sequenceNumber) newest = node;
    return newest?.id;
  }

  /** The branch ending at `leafId`, root first (empty for an unknown id). */
  branch(leafId: string | undefined): MessageNode[] {
    const path: MessageNode[] = [];
    for (let id = leafId ?? null; id !== null && path.length < this.byId.size; ) {
      const node = this.byId.get(id);
      if (!node) break;
      path.push(node);
      id = node.parentId;
    }
    return path.reverse();
  }
}
