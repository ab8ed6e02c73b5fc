import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';

/**
 * What every local event source (the queue poller, the stream reader) offers the stack and the
 * tests, and the handler shapes they call: Lambda's event source mappings have no process of their
 * own locally, so these stand in for them and must start, stop and crash the same way.
 */

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;
export type StreamHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse | undefined>;

export interface Consumer {
  /** Lets the work in hand finish (the stream reader then saves its position), then stops. */
  stop(): Promise<void>;
  /**
   * Stops as a crash (kill -9) would: nothing more is read, handed over, deleted or saved, and
   * nothing is waited for. What was in hand is abandoned (tests of what a restart recovers).
   */
  halt(): void;
  /** Stops taking new work until `resume` (what is in hand finishes): holds a backlog back. */
  pause(): void;
  resume(): void;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
