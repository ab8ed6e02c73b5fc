import type { queueDefinitions } from '../shared/resources';

/**
 * Background consumers, described once: CDK wires each to its event source (an SQS queue, or the
 * table's stream) and the local stack runs the same handler with the same event shapes.
 * Entries are `functions/workers/<name>.ts`, exporting `handler`.
 */
export type WorkerSource =
  | { kind: 'queue'; queue: (typeof queueDefinitions)[number]['name']; batchSize: number }
  | { kind: 'stream'; batchSize: number };

export interface WorkerDefinition {
  name: string;
  description: string;
  source: WorkerSource;
  timeoutSeconds: number;
}

/** Added by the issues that need them (webhook fan-out and delivery, PDF rendering, message purge). */
export const workerDefinitions: readonly WorkerDefinition[] = [];

export const workerEntry = (name: string): string => `functions/workers/${name}.ts`;
