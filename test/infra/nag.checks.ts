import { App, Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { synthesize } from './synth';

const { app } = synthesize();
const packs = () => [new AwsSolutionsChecks(), new ServerlessChecks()];

/** Every acknowledged rule id in the tree, with its reasons. */
function acknowledgments(root: IConstruct): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const construct of root.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        const rule = id
          .replace(/^annotation::/i, '')
          .replace(/:<[A-Za-z0-9]+>\/\*\/\*\/@connections/, ':<api>/*/*/@connections');
        found.set(rule, [...(found.get(rule) ?? []), reason]);
      }
    }
  }
  return found;
}

describe('cdk-nag', () => {
  it('reports nothing left for the AwsSolutions and Serverless packs', () => {
    for (const pack of packs()) {
      const report = pack.validateScope(app);
      const findings = report.violations.flatMap((violation) =>
        violation.violatingResources.map((resource) => `${violation.ruleName} ${resource.constructPath}`),
      );
      expect(findings, pack.name).toEqual([]);
      expect(report.success, pack.name).toBe(true);
    }
  });

  it('acknowledges exactly these findings, each with its reason', () => {
    const found = acknowledgments(app);
    expect([...found.keys()].sort()).toEqual(
      [
        // Authorization and validation live in the shared middleware, not in API Gateway.
        'AwsSolutions-APIG2',
        'AwsSolutions-APIG4',
        'AwsSolutions-COG4',
        // CDK's own roles and grants.
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
        'AwsSolutions-IAM5[Action::kms:ReEncrypt*]',
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<api>/*/*/@connections/*]',
        // Export files are objects named per job.
        'AwsSolutions-IAM5[Resource::<ExportsBucket5A12738B.Arn>/*]',
        // Attachments are objects named per upload; GuardDuty's scanner reads and tags the checked
        // ones and manages its own EventBridge rule under a documented prefix.
        'AwsSolutions-IAM5[Resource::<UploadsBucketC4B27CC7.Arn>/*]',
        'AwsSolutions-IAM5[Resource::<UploadsBucketC4B27CC7.Arn>/files/*]',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:rule/DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*]',
        // Scan results go to a queue with its own DLQ.
        'Serverless-EventBusDLQ',
        // The runtime pin.
        'AwsSolutions-L1',
        'Serverless-LambdaLatestVersion',
        // Failed work lands in queues that have no DLQ of their own.
        'AwsSolutions-SQS3',
        'Serverless-SQSRedrivePolicy',
        'Serverless-LambdaDLQ',
        'Serverless-LambdaEventSourceMappingDestination',
        'Serverless-SNSRedrivePolicy',
        // The Discord bot token is rotated in Discord, not by a rotation function; the search
        // database's admin secret is read only by its migration.
        'AwsSolutions-SMG4',
        // The search index (infra/constructs/search-index.ts): functions in its VPC, its database,
        // CDK's custom resource framework for its migration.
        'AwsSolutions-EC23',
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        'AwsSolutions-IAM5[Resource::<SearchIndexMigrationB0B1341F.Arn>:*]',
        'AwsSolutions-RDS10',
        'AwsSolutions-RDS11',
        'AwsSolutions-RDS14',
        'AwsSolutions-VPC7',
        'Serverless-LambdaDefaultMemorySize',
        'Serverless-LambdaTracing',
        // CDK's own, on the VPC's availability zones (CloudFormation's template validation).
        'CloudFormation-Validate::W3010',
      ].sort(),
    );
    for (const [rule, reasons] of found) {
      for (const reason of reasons) expect(reason.length, rule).toBeGreaterThan(60);
    }
  });

  it('would report what nobody acknowledged', () => {
    const stack = new Stack(new App(), 'Bare');
    new Queue(stack, 'Queue');
    const ruleNames = packs().flatMap((pack) =>
      pack.validateScope(stack).violations.map((violation) => violation.ruleName),
    );
    expect(ruleNames).toEqual(expect.arrayContaining(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']));
  });
});
