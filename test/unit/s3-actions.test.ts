import { describe, expect, it } from 'vitest';
import { awsCalls, s3Operations } from '../../infra/iam/aws-calls';
import { checksOf } from '../../infra/local/iam/checks';
import type { Identity } from '../../infra/local/iam/identity';

/**
 * One S3 table (infra/iam/aws-calls.ts): the local enforcement of each S3 request and the grants
 * the template tests derive from a bundle's SDK commands read the same actions.
 */
const identity: Identity = {
  functionName: 'uploads',
  roleName: 'UploadsRole',
  region: 'eu-west-1',
  account: '123456789012',
  statements: [],
  queueArns: {},
  bucketKeys: { exports: 'arn:aws:kms:eu-west-1:123456789012:key/exports' },
};

describe('S3 actions', () => {
  it('checks each operation locally as the table says, KMS included under an SSE-KMS bucket', () => {
    for (const [operation, entry] of Object.entries(s3Operations)) {
      const checks = checksOf('s3', operation, { Bucket: 'exports', Key: 'a/b.pdf' }, identity);
      const kms = 'bucketKeyActions' in entry ? entry.bucketKeyActions : [];
      expect(checks, operation).toEqual([
        {
          action: entry.action,
          resources: ['onBucket' in entry ? 'arn:aws:s3:::exports' : 'arn:aws:s3:::exports/a/b.pdf'],
        },
        ...kms.map((action) => ({ action, resources: [identity.bucketKeys.exports] })),
      ]);
    }
  });

  it('checks a copy as a read of its source and a write of its destination, as the command grants', () => {
    const checks = checksOf(
      's3',
      'CopyObject',
      { Bucket: 'uploads', Key: 'files/x', CopySource: '/exports/tmp/x' },
      identity,
    );
    expect(checks).toEqual([
      { action: 's3:GetObject', resources: ['arn:aws:s3:::exports/tmp/x'] },
      { action: 'kms:Decrypt', resources: [identity.bucketKeys.exports] },
      { action: 's3:PutObject', resources: ['arn:aws:s3:::uploads/files/x'] },
    ]);
    expect(awsCalls.CopyObjectCommand).toEqual({
      actions: ['s3:GetObject', 's3:PutObject'],
      bucketKeyActions: ['kms:Decrypt', 'kms:GenerateDataKey'],
    });
    expect(awsCalls.Upload).toEqual({
      actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
      bucketKeyActions: ['kms:GenerateDataKey', 'kms:Decrypt'],
    });
  });
});
