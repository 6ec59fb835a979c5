import type { DocumentFormat, DocumentPart, ReaderLimits } from '../readers/reader.ts';
import { runBoundedChild, type ChildLimits } from './bounded-child.ts';

// A document of any format read in the bounded child (bounded-child.ts), as PDFs are: whatever
// its bytes do to the reader (a zip bomb past the package bounds, markup nested without end, a
// parser's runaway) costs only the child and ends as TOO_COMPLEX, recorded by this process. The
// child detects the format from the bytes (shared/readers/documents.ts) and answers with the parts,
// or with the format alone for a PDF, which the pipeline reads page by page.

export interface ReadOutcome {
  format: DocumentFormat;
  parts: DocumentPart[];
}

export function readDocumentBounded(
  path: string,
  limits: { child: ChildLimits; reader: ReaderLimits },
  onStats?: (stats: { childPeakRssMb?: number }) => void,
) {
  return runBoundedChild<ReadOutcome>(
    { kind: 'read', source: path, limits: limits.reader },
    {
      limits: limits.child,
      task: { verb: 'reading', name: 'the document reader', noun: 'document' },
      onStats,
      onMessage: (message, session) => {
        if (message.type !== 'document') return;
        session.answered();
        session.finish(undefined, { format: message.format, parts: message.parts });
      },
    },
  );
}
