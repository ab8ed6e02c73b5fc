import type { Statement } from '../../iam/policy';

/**
 * Who a function's AWS calls are made as, for the local IAM check: its role's statements from the
 * synthesized template (resolved to the local resources), and what the check needs to spell the
 * resource ARNs AWS would authorize a call against. Built by the stack (stack.ts) for each function
 * and handed to its isolate at start.
 */
export interface Identity {
  functionName: string;
  /** The role's logical id: `arn:aws:sts::<account>:assumed-role/<role>/<function>` in messages. */
  roleName: string;
  region: string;
  account: string;
  statements: readonly Statement[];
  /** Local queue URL → ARN (the emulator's URLs do not spell the ARN). */
  queueArns: Readonly<Record<string, string>>;
  /** Bucket name → the ARN of its SSE-KMS key: S3 uses it on the caller's behalf. */
  bucketKeys: Readonly<Record<string, string>>;
}
