// The question set of `npm run eval`: questions about the repository's fixture PDFs, worded as
// a reader would ask them (not copied from the text), each with the pages that answer it.
// `before` holds the earlier user turns of a conversation: the last question is a follow-up that
// names nothing new, and it is the one measured. The documents are in bench/lib/eval-documents.ts.
//
// Two splits, kept apart so a change to ranking is judged on questions it was not shaped on:
// `dev` (the 44 questions written before the reranker, which its weights were chosen on) and
// `held-out` (written afterwards, each answering page checked in the document's text, and not
// looked at while choosing anything). `npm run eval` reports both.

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
  /** dev: the questions the ranking was shaped on; held-out: not (see above). */
  split: 'dev' | 'held-out';
}

const inFile =
  (file: string) =>
  (id: string, question: string, pages: number[], before?: string[]): EvalQuestion => {
    const q: EvalQuestion = { id, file, question, pages, split: 'dev' };
    if (before) q.before = before;
    return q;
  };
const table = inFile('rainfall-report.pdf');
/** The made-up name of the table's row `i`. */
const station = (i: number) => tableRow(i)[0]!;
const scan = inFile('westmere-scan.pdf');

const tm = inFile('tracemonkey.pdf');
const hello = inFile('hello-world.pdf');
const japanese = inFile('kansai-notes-ja.pdf');
const arabic = inFile('arabic-facts.pdf');
const glyphs = inFile('orchard-glyph-ids.pdf');
const heldOut = (q: EvalQuestion): EvalQuestion => ({ ...q, split: 'held-out' });

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
  // ---- held-out: written after the reranker's weights were chosen, not looked at while choosing them.
  ...[
    tm('oracle', 'Where does the VM remember that a variable sometimes holds values that are not integers?', [5]),
    tm('test-machine', 'On what computer were the measurements taken?', [10]),
    tm('constant-folding', 'Give an example of what the constant folding filter does to an instruction.', [8]),
    tm('backward-filters', 'Which backward filters run over the recorded trace?', [8]),
    tm('soft-float', 'What happens to floating-point instructions on processors without floating-point support?', [8]),
    tm('affiliations', 'Which companies and universities do the authors work for?', [1]),
    tm('luajit', 'Is there a Lua virtual machine that uses trace compilation ideas?', [12]),
    tm('dynamo', 'What was Dynamo trying to replace with native code tracing?', [12]),
    tm('recursion-benchmarks', 'Which benchmarks gain little because recursion is not traced?', [11]),
    tm('object-shape', "How is a guard on an object's layout made a cheap check?", [5]),
    tm('boxed-values', 'How does the interpreter store values, and why do traces unbox them?', [4]),
    tm(
      'undefined-first-iteration',
      'What is the problem with variables that are undefined on the first iteration of a loop?',
      [5],
    ),
    tm('speculation', 'What does recording a trace assume about the following iterations of the loop?', [2]),
    tm('nanojit-separate', 'Can the trace compilation subsystem be used outside this VM?', [7]),
    tm('filter-passes', 'How many passes over the trace do the optimization filters need?', [8]),
    tm('v8-comparison', 'How does the tracing VM compare with V8 and SquirrelFish Extreme?', [10, 11]),
    tm('eval-untraced', 'Does the implementation trace eval?', [11]),
    tm('keywords', 'What keywords does the paper list?', [1]),
    tm(
      'type-stable-iteration',
      'What is a type-stable loop iteration, and what can the end of the trace do then?',
      [5],
    ),
    tm('global-imports', 'How does a trace read and write local and global variables quickly?', [4]),
    tm(
      'doubles',
      'What number representation does the language define, and which operators really work on integers?',
      [5],
    ),
    tm('loop-header', 'How does the bytecode compiler mark which bytecodes are loop headers?', [5]),
    tm('trunk-trace', 'What is the difference between the trunk trace and a branch trace of a tree?', [6]),
    tm('extend-side-exit', 'At which side exits is a tree extended, and where is it not?', [6]),
    tm('dead-code', 'What does dead code elimination remove from the trace?', [8]),
    tm('cycles-per-bytecode', 'How many cycles does an interpreted bytecode take in the tracer?', [12]),
    tm('benchmark-runs', 'How many times was each benchmark program run, and after what warmup?', [10]),
    tm('tail-duplication', 'Why not simply keep tracing the outer loop through the inner one?', [2]),
    tm('lir-primitives', 'What are the important primitives of the trace intermediate representation?', [4]),
    tm('nsf-grants', 'Which National Science Foundation grants supported the work?', [13]),
    // The table: one question per station, about a different cell each time.
    ...[5, 9, 14, 17, 23, 27, 31, 38, 42, 49, 53, 57].map((row, i) => {
      const name = station(row);
      const asks = [
        `What is the elevation of ${name}?`,
        `How much rainfall is recorded for ${name}?`,
        `Which season is the wettest at ${name}?`,
      ];
      return table(`table-station-${row}`, asks[i % asks.length]!, [TABLE.rowPages[row]!]);
    }),
    // The scan again, worded away from its text.
    scan('scan-keeper-name', "What is the lighthouse keeper's name?", [3]),
    scan('scan-cheese', 'Where near the fountain is cheese for sale?', [2]),
    scan('scan-pier', 'What protects the ships in bad weather?', [4]),
    scan('scan-visitors', 'Can visitors attend the meetings of the town council?', [5]),
    scan('scan-town', 'What is the name of the harbour town in the first chapter?', [1]),
    // Other kinds: a one-line PDF, Japanese in a CID font, Arabic drawn right to left, and a PDF whose
    // font maps no glyph to Unicode (read by OCR).
    hello('hello', 'What does the document say?', [1]),
    japanese('ja-capital', '日本の首都はどこですか', [1]),
    japanese('ja-kinkakuji', '金閣寺は有名ですか', [2]),
    japanese('ja-takoyaki', 'たこ焼きはどこで人気ですか', [3]),
    arabic('ar-cairo', 'ما هي عاصمة مصر؟', [1]),
    arabic('ar-nile', 'ما هو أطول نهر في أفريقيا؟', [2]),
    arabic('ar-book', 'أين الكتاب؟', [3]),
    glyphs('glyph-apples', 'How many kinds of apples grow in the orchard?', [1]),
    glyphs('glyph-cider', 'When is the cider festival held?', [2]),
  ].map(heldOut),
];
