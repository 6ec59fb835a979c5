import { MessageTree, type MessageNode } from '#shared/chats/conversations/message-tree.ts';

// The tree of a chat's messages: branches, siblings, the newest message under a message, and
// messages from before the tree (no parentId) read as one line.

const node = (id: string, sequenceNumber: number, parentId: string | null | undefined, messageType = 'user') =>
  ({ id, sequenceNumber, messageType, type: 'message', ...(parentId !== undefined && { parentId }) }) as MessageNode;

// p1 ─ r1 ─ p2 ─ r2
//         └ p2' ─ r2' , r2''   (an edit of p2, and a regenerated reply)
const tree = new MessageTree([
  node('p1', 1, null),
  node('r1', 2, 'p1', 'ai'),
  node('p2', 3, 'r1'),
  node('r2', 4, 'p2', 'ai'),
  node('p2e', 5, 'r1'),
  node('r2e', 6, 'p2e', 'ai'),
  node('r2f', 7, 'p2e', 'ai'),
]);
const ids = (nodes: MessageNode[]) => nodes.map((n) => n.id);

test('a branch runs from the root to its leaf; siblings are in creation order', () => {
  expect(ids(tree.branch('r2'))).toEqual(['p1', 'r1', 'p2', 'r2']);
  expect(ids(tree.branch('r2f'))).toEqual(['p1', 'r1', 'p2e', 'r2f']);
  expect(tree.siblingIds('p2e')).toEqual(['p2', 'p2e']);
  expect(tree.siblingIds('r2f')).toEqual(['r2e', 'r2f']);
  expect(tree.siblingIds('p1')).toEqual(['p1']);
  expect(tree.branch('unknown')).toEqual([]);
});

test('a branch chosen by a message runs on to the newest message under it; the active leaf is the chosen one, else the newest', () => {
  expect(tree.newestUnder('p2')).toBe('r2');
  expect(tree.newestUnder('r1')).toBe('r2f');
  expect(tree.newestUnder('r2')).toBe('r2');
  expect(tree.activeLeaf('p2')).toBe('r2');
  expect(tree.activeLeaf(undefined)).toBe('r2f');
  expect(tree.activeLeaf('gone')).toBe('r2f');
  expect(new MessageTree([]).activeLeaf(undefined)).toBeUndefined();
});

test('messages stored before the tree follow the message before them; new ones after them name their parent', () => {
  const old = new MessageTree([
    node('a', 1, undefined),
    node('b', 2, undefined, 'ai'),
    node('c', 4, undefined),
    node('d', 5, 'b'),
  ]);
  expect(ids(old.branch('c'))).toEqual(['a', 'b', 'c']);
  expect(old.get('a')?.parentId).toBeNull();
  expect(old.siblingIds('d')).toEqual(['c', 'd']);
});
