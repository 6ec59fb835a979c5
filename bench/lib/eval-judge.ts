import type { AiProvider } from '../../shared/ai/types.ts';

// The judge of `npm run eval`: the configured model (through the service's own AI provider, so
// OpenAI-compatible servers and Bedrock alike) scores each reply 1–5 for groundedness (every
// statement supported by the cited sources) and relevance (it answers the question), with the
// prompts below. Only when a model is configured: the offline provider is never its own judge.
// Each prompt asks for the integer alone on the first line, so the score is read without parsing
// prose; a reply without one leaves the question unscored (and counted as such).

export const GROUNDEDNESS_PROMPT = `You check whether an answer is supported by its sources.
Sources (numbered as the answer cites them):
{sources}

Question: {question}
Answer: {answer}

Score from 1 to 5 how well every statement of the answer is supported by the sources above
(5: every statement is supported; 3: some statements are not; 1: the answer is not supported or
contradicts them). Reply with the score alone on the first line.`;

export const RELEVANCE_PROMPT = `You check whether an answer answers its question.
Question: {question}
Answer: {answer}

Score from 1 to 5 how completely and directly the answer answers the question (5: fully and
directly; 3: partly; 1: not at all). Reply with the score alone on the first line.`;

/** The score on a judge's reply's first line (1–5), or undefined. */
export function judgeScore(reply: string): number | undefined {
  const m = /^\s*([1-5])\b/.exec(reply);
  return m ? Number(m[1]) : undefined;
}

export const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? '');

const JUDGE_SYSTEM = 'You are a strict evaluator. Reply with a single digit from 1 to 5.';

export interface JudgedSource {
  fileName?: string | undefined;
  page: number;
  quote: string;
}

/** A judge on the provider's chat model: (question, answer, its sources) → both scores, or undefined. */
export function makeJudge(provider: AiProvider) {
  const ask = async (prompt: string) => {
    const { text } = await provider.reply({ system: JUDGE_SYSTEM, history: [], prompt, maxTokens: 5 });
    return judgeScore(text);
  };
  return async (question: string, answer: string, sources: JudgedSource[]) => {
    const listed = sources.map((s, i) => `[${i + 1}] (${s.fileName}, page ${s.page}) ${s.quote}`).join('\n');
    const [groundedness, relevance] = await Promise.all([
      ask(fill(GROUNDEDNESS_PROMPT, { sources: listed, question, answer })),
      ask(fill(RELEVANCE_PROMPT, { question, answer })),
    ]);
    return groundedness && relevance ? { groundedness, relevance } : undefined;
  };
}
