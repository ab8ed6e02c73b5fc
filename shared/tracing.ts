import type { Tracer } from '@aws-lambda-powertools/tracer';

type Client = Parameters<Tracer['captureAWSv3Client']>[0];

/**
 * X-Ray subsegments for the SDK clients, with Powertools Tracer. Every client passes through
 * `traced` where it is created; the workers load the Tracer and switch tracing on
 * (`traceClientsWith`, in shared/batch.ts). The API functions do not load it: its
 * X-Ray SDK costs more than the house rule allows a user-facing function (docs/decisions.md).
 */
const created: Client[] = [];
let capture: ((client: Client) => void) | undefined;

export function traced<T extends Client>(client: T): T {
  created.push(client);
  capture?.(client);
  return client;
}

/** Traces every client created so far and from now on (captureAWSv3Client adds a middleware). */
export function traceClientsWith(tracer: Tracer): void {
  capture = (client) => {
    tracer.captureAWSv3Client(client);
  };
  for (const client of created) capture(client);
}
