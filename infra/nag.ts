import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges cdk-nag findings (AwsSolutions and Serverless packs, registered in infra/app.ts and
 * run by test/infra/nag.checks.ts) on a construct and everything under it, each with its reason.
 * cdk-nag 3 reads CDK's own `Validations.of(…).acknowledge()` (v2's NagSuppressions are gone); a
 * finding with a detail is acknowledged by its full id, e.g. `AwsSolutions-IAM5[Resource::*]`.
 * Keep them next to what they are about, and as narrow as the construct allows.
 */
export function acknowledge(scope: IConstruct, reasons: Record<string, string>): void {
  Validations.of(scope).acknowledge(...Object.entries(reasons).map(([id, reason]) => ({ id, reason })));
}

/** Reasons shared by several constructs. */
export const reasons = {
  runtimePin:
    'Runtime pinned to nodejs22.x, the Node.js floor of the project, which every npm script and CI run on (CI also on Node 24); moving to a newer runtime is a deliberate change with the toolchain, not a template default.',
  noAsyncInvocations:
    'No asynchronous invocations: API Gateway and Secrets Manager invoke synchronously, and event source mappings have their own failure handling (SQS redrive to a DLQ, stream on-failure queues), so a function-level DLQ would never receive anything.',
  deadLetterQueue:
    'This queue is itself where failed work lands (a dead-letter queue or a stream trigger on-failure destination): it has no DLQ of its own; it is alarmed on depth and age and redriven by hand (docs/operations.md).',
} as const;
