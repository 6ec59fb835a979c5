// The prompts `npm run eval` gives the configured model when it judges a reply (only when a model
// is configured; the offline provider is never its own judge). Each asks for one integer 1–5 on
// the first line, so the score is read without parsing prose.

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
