import { estimateTokens, MESSAGE_OVERHEAD_TOKENS } from './tokens.ts';
import type { ChatInput, Source, Usage } from './types.ts';

// What a language model is sent for one prompt: the chat's system message, in a file chat the
// retrieved passages with an instruction to answer from them, the history (oldest first) and
// the prompt.

export interface ModelMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function sourceLabel(source: Source): string {
  return `${source.fileName ?? `file ${source.fileId}`}, page ${source.page}`;
}

export function passagesMessage(sources: Source[]): string {
  if (sources.length === 0) {
    return (
      "This chat answers from the user's documents, but no passage of them matched this prompt. " +
      'Say that the documents do not seem to cover it; do not make up an answer.'
    );
  }
  const passages = sources.map((s, i) => `[${i + 1}] ${sourceLabel(s)}\n${s.text.trim()}`).join('\n\n');
  return (
    "Answer from these passages of the user's documents. Cite them as [n] with the page. " +
    'If they do not contain the answer, say so rather than guessing.\n\n' +
    passages
  );
}

export function modelMessages(input: ChatInput): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'system', content: input.system }];
  if (input.fileChat) messages.push({ role: 'system', content: passagesMessage(input.sources ?? []) });
  for (const turn of input.history) messages.push({ role: turn.role, content: turn.content });
  messages.push({ role: 'user', content: input.prompt });
  return messages;
}

/** Usage estimated from the text (when a provider reports none, or a reply was cut short). */
export function estimateUsage(input: ChatInput, reply: string): Usage {
  const promptTokens = modelMessages(input).reduce((n, m) => n + estimateTokens(m.content) + MESSAGE_OVERHEAD_TOKENS, 0);
  const completionTokens = estimateTokens(reply);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}
