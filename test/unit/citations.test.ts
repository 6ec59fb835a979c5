import { jest } from '@jest/globals';
import fc from 'fast-check';
import { CitationStream, checkCitations } from '#shared/chats/replies/citations.ts';
import { retrievalQuery, rewritePrompt, REWRITE_SYSTEM } from '#shared/chats/replies/retrieval-query.ts';
import { createOfflineProvider, splitIntoParts } from '#shared/ai/offline-provider.ts';
import type { AiProvider, ChatInput } from '#shared/ai/types.ts';
import { estimateTokens } from '#shared/ai/tokens.ts';

// [n] citations of file-chat replies (whole and streamed) and the retrieval query of a follow-up.

test('markers naming no source are removed; the cited numbers are collected', () => {
  const { text, cited } = checkCitations(
    'Loops get hot after two runs [2]. Nested ones are traced too [1, 7]. Wrong [9]. Code: items[0].',
    3,
  );
  expect(text).toBe('Loops get hot after two runs [2]. Nested ones are traced too [1]. Wrong . Code: items[0].');
  expect([...cited].sort()).toEqual([1, 2]);
  expect(checkCitations('No sources here [1].', 0).text).toBe('No sources here .');
});

test('a streamed reply gives the same text whatever the deltas, a marker split across them included', () => {
  const reply = 'First [1] then [2][4] and [12] or [3, 1] with arr[2] end [';
  const whole = checkCitations(reply, 3);
  const splits = [[...reply], splitIntoParts(reply, 5), reply.match(/.{1,3}/g)!, [reply]];
  for (const deltas of splits) {
    const stream = new CitationStream(3);
    const out = deltas.map((d) => stream.push(d)).join('') + stream.end();
    expect(out).toBe(whole.text);
    expect(stream.cited).toEqual(whole.cited);
    // Nothing sent ever holds an invalid marker, even partway.
    const partial = new CitationStream(3);
    let sent = '';
    for (const d of deltas) {
      sent += partial.push(d);
      expect(sent).not.toMatch(/(?<!\w)\[(?:4|12)\]/);
    }
  }
});

test('any bracketed number is a marker: [1000], spaced and long lists are checked like [9]', () => {
  expect(checkCitations('A [1000] b [ 2 ] c [2 ,7] d [0] e [00001]', 3).text).toBe('A  b [2] c [2] d  e [1]');
  const long = `[${Array.from({ length: 30 }, (_, i) => i + 1).join(', ')}]`;
  expect(checkCitations(`see ${long}.`, 3).text).toBe('see [1, 2, 3].');
  // Inside an unclosed bracket of numbers, a bracket is no marker: removing it would join the rest.
  expect(checkCitations('[0,[1000]2] and [[12]02]', 2).text).toBe('[0,[1000]2] and [[12]02]');
});

test('streamed and whole replies read the same for any text and any deltas (generated)', () => {
  const piece = fc.constantFrom('[', ']', '1', '2', '9', '0', ',', ' ', 'a', '[1', '2]', '1000', ', ');
  const reply = fc.array(piece, { maxLength: 80 }).map((p) => p.join(''));
  fc.assert(
    fc.property(reply, fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 20 }), (text, sizes) => {
      const whole = checkCitations(text, 2);
      const deltas: string[] = [];
      let at = 0;
      for (const size of sizes) {
        deltas.push(text.slice(at, at + size));
        at += size;
      }
      deltas.push(text.slice(at));
      const stream = new CitationStream(2);
      let sent = '';
      for (const d of deltas) {
        sent += stream.push(d);
        // What has been sent never holds a marker that will turn out to name no source.
        expect(checkCitations(sent, 2).text.length).toBe(sent.length);
      }
      expect(sent + stream.end()).toBe(whole.text);
      expect(stream.cited).toEqual(whole.cited);
    }),
    { numRuns: 2_000 },
  );
});

test('a marker longer than a reply holds back is not one, streamed or whole', () => {
  const list = `[${'1, '.repeat(100)}9]`;
  const text = `x ${list} y`;
  const stream = new CitationStream(2);
  const out = [...text].map((c) => stream.push(c)).join('') + stream.end();
  expect(out).toBe(checkCitations(text, 2).text);
  expect(out).toBe(text);
});

test('the offline reply cites its passages with markers that all name a source', async () => {
  const provider = createOfflineProvider({ maxInputs: 16, maxTokens: 10_000 });
  const source = (page: number) => ({
    fileId: 'f',
    fileName: 'a.pdf',
    page,
    chunk: page,
    score: 0.5,
    text: `Text of page ${page}, see [7].`,
    quote: `Text of page ${page}, see [7].`,
  });
  const input: ChatInput = {
    system: 's',
    history: [],
    prompt: 'q',
    maxTokens: 100,
    fileChat: true,
    sources: [source(1), source(2)],
  };
  const { text } = await provider.reply(input);
  const checked = checkCitations(text, 2);
  expect(checked.text).toBe(text);
  expect([...checked.cited].sort()).toEqual([1, 2]);
  expect(text).toContain('see (7)');
});

describe('the retrieval query of a follow-up', () => {
  const offline = createOfflineProvider({ maxInputs: 16, maxTokens: 10_000 });
  const history = [
    { role: 'user' as const, content: 'What is trace stitching?' },
    { role: 'assistant' as const, content: 'It links a side exit to a branch trace [1].' },
  ];

  test('a first prompt is used as it is, with no model call', async () => {
    const model = { ...offline, name: 'openai', reply: jest.fn() } as unknown as AiProvider;
    expect(await retrievalQuery(model, [], 'What is trace stitching?')).toEqual({ query: 'What is trace stitching?' });
    expect(model.reply).not.toHaveBeenCalled();
  });

  test('offline: the previous user turn joined to the prompt', async () => {
    expect(await retrievalQuery(offline, history, 'Why is it cheaper?')).toEqual({
      query: 'What is trace stitching?\nWhy is it cheaper?',
    });
  });

  test('with a model: the rewritten question, and the tokens the rewrite cost', async () => {
    const usage = { promptTokens: 40, completionTokens: 8, totalTokens: 48 };
    const reply = jest.fn(async () => ({
      text: ' Why is trace stitching cheaper than calling traces from the monitor?\n',
      usage,
    }));
    const model = { ...offline, name: 'openai', reply } as unknown as AiProvider;
    const out = await retrievalQuery(model, history, 'Why is it cheaper?');
    expect(out).toEqual({ query: 'Why is trace stitching cheaper than calling traces from the monitor?', usage });
    const sent = (reply.mock.calls[0] as unknown as [ChatInput])[0];
    expect(sent.system).toBe(REWRITE_SYSTEM);
    expect(sent.prompt).toBe(rewritePrompt(history, 'Why is it cheaper?'));
    expect(sent.prompt).toContain('<conversation>\nuser: What is trace stitching?\nassistant: It links');
  });

  test('a failed rewrite falls back to the joined turns, charged the prompt it may have been sent', async () => {
    const model = {
      ...offline,
      name: 'openai',
      reply: async () => Promise.reject(new Error('down')),
    } as unknown as AiProvider;
    const { query, usage } = await retrievalQuery(model, history, 'Why is it cheaper?');
    expect(query).toBe('What is trace stitching?\nWhy is it cheaper?');
    expect(usage?.completionTokens).toBe(0);
    expect(usage?.totalTokens).toBe(usage?.promptTokens);
    expect(usage?.promptTokens).toBeGreaterThan(estimateTokens(rewritePrompt(history, 'Why is it cheaper?')));
  });
});
