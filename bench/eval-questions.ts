// The question set of `npm run eval`: questions about the repository's fixture PDFs, worded as
// a reader would ask them (not copied from the text), each with the pages that answer it.
// `before` holds the earlier user turns of a conversation: the last question is a follow-up that
// names nothing new, and it is the one measured. The documents are in bench/lib/eval-documents.ts.

import { tableRow } from '../test/helpers/make-pdf.ts';
import { TABLE } from './lib/eval-documents.ts';

export { EVAL_DOCUMENTS } from './lib/eval-documents.ts';

export interface EvalQuestion {
  id: string;
  file: string;
  question: string;
  /** 1-based pages of `file` that answer the question. */
  pages: number[];
  /** Earlier prompts of the same chat, asked first (their replies are not measured). */
  before?: string[];
}

const inFile =
  (file: string) =>
  (id: string, question: string, pages: number[], before?: string[]): EvalQuestion => {
    const q: EvalQuestion = { id, file, question, pages };
    if (before) q.before = before;
    return q;
  };
const table = inFile('rainfall-report.pdf');
/** The made-up name of the table's row `i`. */
const station = (i: number) => tableRow(i)[0]!;
const scan = inFile('westmere-scan.pdf');

const tm = inFile('tracemonkey.pdf');

export const EVAL_QUESTIONS: EvalQuestion[] = [
  tm('authors', 'Who is the author?', [1]),
  tm('venue', 'At which conference was this presented, and in what city?', [1]),
  tm('speedup-claim', 'How much faster do programs get with this compiler?', [1, 2]),
  tm('hot-threshold', 'How many times does a loop have to run before it is considered hot?', [2]),
  tm('example-program', 'What does the sample program used in the overview compute?', [2]),
  tm(
    'instruction-count',
    'How many machine instructions does the compiled snippet take compared with the interpreter?',
    [3],
  ),
  tm('lir', 'What is the intermediate representation that traces are recorded in?', [3, 4]),
  tm('type-map', 'What does a typed trace require about variable types before it can be entered?', [4]),
  tm('property-access', 'How are property reads on objects made cheaper on a trace?', [4, 5]),
  tm('numbers', 'JavaScript only has floating point numbers, so how do they get integer arithmetic?', [5]),
  tm('int-becomes-double', 'What happens when a loop variable that started as an integer turns into a double?', [5]),
  tm('give-up', 'When does the VM stop trying to record a loop that keeps failing?', [6]),
  tm('nested-loops', 'How do they deal with loops inside other loops without duplicating code?', [2, 6, 7]),
  tm('compiler-passes', 'Which optimizations does the trace compiler apply?', [8]),
  tm('registers', 'How are registers assigned when generating code?', [8]),
  tm('gc', 'What kind of garbage collector does the interpreter use?', [8]),
  tm('users', 'How many people use the browser that this engine ships in?', [8]),
  tm(
    'stitching',
    'How does execution move from one trace to a branch trace without going back through the monitor?',
    [9],
  ),
  tm('preemption', 'How is a long-running script interrupted while it runs native code?', [9]),
  tm('ffi', 'How are C builtins and browser functions called from traced code?', [10]),
  tm('benchmarks', 'Which benchmark suite did they use to evaluate the system?', [10]),
  tm('best-speedup', 'Which benchmark got the largest speedup and by how much?', [10]),
  tm('untraced', 'Why are some of the benchmarks not traced at all?', [11]),
  tm('recording-cost', 'How expensive is recording and compiling compared with just interpreting?', [12]),
  tm('psyco', 'Is there any other type-specializing trace compiler for a dynamic language?', [12]),
  tm('future', 'What do the authors plan to work on next?', [13]),
  tm('funding', 'Who paid for this research?', [13]),
  tm('interpreter-share', 'What fraction of the bytecodes run natively rather than in the interpreter?', [10, 11]),
  // Follow-ups: the last prompt names nothing the document could be found by.
  tm('follow-stitching', 'Why is that cheaper than the alternative?', [9], ['What is trace stitching?']),
  tm(
    'follow-blacklist',
    'After how many failures does that happen?',
    [6],
    ['Explain how blacklisting of loops works.'],
  ),
  tm('follow-gc', 'Is it generational?', [8], ['Tell me about the garbage collector of SpiderMonkey.']),
  tm('follow-psyco', 'Which language does it target?', [12], ['What is Psyco?']),
  tm(
    'follow-sieve',
    'What happens on its fourth iteration?',
    [4],
    ['Walk me through the sieve of Eratosthenes example.'],
  ),
  // A table over two pages (test/helpers/make-pdf.ts makeTablePdf): a question about a cell names its row's station.
  table('table-elevation', `How high up is the ${station(3)} station?`, [TABLE.rowPages[3]!]),
  table('table-rainfall', `How much rain falls at ${station(20)}?`, [TABLE.rowPages[20]!]),
  table('table-season', `In which season is ${station(34)} wettest?`, [TABLE.rowPages[34]!]),
  table('table-rain-late', `What rainfall was measured at ${station(45)}?`, [TABLE.rowPages[45]!]),
  table('table-two-cells', `What is the elevation of ${station(58)}, and when is it wettest?`, [TABLE.rowPages[58]!]),
  table('table-columns', 'What does the table of stations list for each of them?', [1]),
  // A scan with no text layer: read by OCR.
  scan('scan-keeper', 'Who looks after the lighthouse, and for how long?', [3]),
  scan('scan-market', 'On which days can I buy bread at the market?', [2]),
  scan('scan-storms', 'When do the storms come, and where do the ships shelter?', [4]),
  scan('scan-council', 'Where does the town council meet?', [5]),
  scan('scan-fleet', 'When does the fishing fleet go out?', [1]),
];
