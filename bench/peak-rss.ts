import { readFileSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Peak resident set size of this process over a stretch of work. On Linux the kernel keeps the
 * high-water mark (`VmHWM`) and resets it to the current RSS when `5` is written to
 * `/proc/self/clear_refs`: exact, whatever happens between samples. Elsewhere (or when the reset is
 * refused) the peak is the largest of samples taken every `everyMs`.
 */
export interface PeakRss {
  /** Bytes. */
  peak: number;
  /** `kernel`: VmHWM since the reset; `sampled`: the largest sample. */
  source: 'kernel' | 'sampled';
  /** The largest sample (a cross-check of the kernel's figure) and the largest V8 heap in use. */
  sampledPeak: number;
  heapUsedPeak: number;
  /** The largest committed size of V8's young generation (new space) and old space seen. */
  newSpacePeak: number;
  oldSpacePeak: number;
  samples: number;
}

function highWaterMark(): number | undefined {
  try {
    const line = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return line?.[1] ? Number(line[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function resetHighWaterMark(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    const mark = highWaterMark();
    // The mark now equals the current RSS (give or take the pages touched since).
    return mark !== undefined && mark <= process.memoryUsage.rss() + 4 * 1024 * 1024;
  } catch {
    return false;
  }
}

/** Starts watching now; `stop()` gives the peak since. */
export function watchPeakRss(everyMs = 50): { stop(): PeakRss } {
  const kernel = resetHighWaterMark();
  let sampledPeak = 0;
  let heapUsedPeak = 0;
  let newSpacePeak = 0;
  let oldSpacePeak = 0;
  let samples = 0;
  const sample = () => {
    const usage = process.memoryUsage();
    sampledPeak = Math.max(sampledPeak, usage.rss);
    heapUsedPeak = Math.max(heapUsedPeak, usage.heapUsed);
    for (const space of getHeapSpaceStatistics()) {
      if (space.space_name === 'new_space') newSpacePeak = Math.max(newSpacePeak, space.space_size);
      if (space.space_name === 'old_space') oldSpacePeak = Math.max(oldSpacePeak, space.space_size);
    }
    samples++;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const mark = kernel ? highWaterMark() : undefined;
      return {
        peak: mark ?? sampledPeak,
        source: mark === undefined ? 'sampled' : 'kernel',
        sampledPeak,
        heapUsedPeak,
        newSpacePeak,
        oldSpacePeak,
        samples,
      };
    },
  };
}

/** RSS after a full collection (needs `--expose-gc`; otherwise as it is). */
export function settledRss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage.rss();
}
