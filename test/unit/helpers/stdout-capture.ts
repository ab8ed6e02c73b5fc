import { vi } from 'vitest';

/** Lets the EMF metrics print (vitest's environment silences them), as the function `name`. */
export function enableMetrics(functionName: string): void {
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  vi.stubEnv('POWERTOOLS_DEV', 'false');
  vi.stubEnv('SERVICE_FUNCTION', functionName);
}

/** One EMF document: its directive, then the dimension and metric values at the top level. */
export interface EmfLine {
  _aws: {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

/**
 * Captures what the code writes to stdout (EMF metrics, JSON log lines) from now until
 * `vi.restoreAllMocks()`, and reads it back as JSON lines.
 */
export function captureStdout() {
  const chunks: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  const jsonLines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    clear: () => {
      chunks.length = 0;
    },
    jsonLines,
    metricLines: () => jsonLines().filter((line): line is EmfLine => '_aws' in line),
  };
}
