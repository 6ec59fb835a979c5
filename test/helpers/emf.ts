import { jest } from '@jest/globals';

// The service's metrics as CloudWatch reads them: EMF lines on stdout.

/** An EMF line: one metric set, its namespace, dimensions and values. */
export interface Emf {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

/** The EMF lines written to stdout while `run` runs. */
export async function emitted(run: () => unknown): Promise<Emf[]> {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.startsWith('{"_aws"'))
    .map((l) => JSON.parse(l) as Emf);
}
