import { dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  Architecture,
  ParamsAndSecretsLayerVersion,
  ParamsAndSecretsLogLevel,
  ParamsAndSecretsVersions,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { tableDefinition } from '../../shared/db/table';
import type { BucketAccess, BucketDefinition, QueueDefinition } from '../../shared/resources';
import { SECRET_CACHE_SECONDS } from '../../shared/secrets';
import { execWrapper } from '../function-tuning';
import { acknowledge, reasons } from '../nag';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Read by `shared/config.ts`. */
const TABLE_ENV = 'TABLE_NAME';

/**
 * Transactions need no action of their own: IAM checks each Put/Update/Delete inside them, plus
 * ConditionCheckItem. BatchWriteItem is its own action (shared/db/batch.ts: delivery records,
 * purges). Explicit lists keep `dynamodb:*`-style wildcards out of every policy.
 */
const tableActions = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  readWrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
    'dynamodb:BatchWriteItem',
  ],
} as const;

/**
 * Writes are streamed multipart uploads (shared/storage.ts): their parts authorize as PutObject,
 * and lib-storage aborts an upload that failed (AbortMultipartUpload, an action of its own).
 */
const bucketActions = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject', 's3:AbortMultipartUpload'],
  readWrite: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
  check: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
  delete: ['s3:DeleteObject'],
} as const satisfies Record<BucketAccess, readonly string[]>;

/**
 * The AWS Parameters and Secrets Lambda Extension, how every function that reads a secret reads it
 * (shared/secrets.ts): its layer by the region's published ARN (a template mapping keyed by region
 * when the stack's region is a token), its cache lifetime from the code's constant.
 */
const secretsExtension = ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103, {
  cacheEnabled: true,
  secretsManagerTtl: Duration.seconds(SECRET_CACHE_SECONDS),
  logLevel: ParamsAndSecretsLogLevel.WARN,
});

/** A secret the function reads through the extension: granted, and named in its environment. */
export interface SecretRead {
  secret: ISecret;
  /** The variable holding the secret's ARN (read by shared/config.ts or the function). */
  env: string;
}

export interface ServiceFunctionProps extends NodejsFunctionProps {
  /** Relative to the project root, e.g. `functions/admin/handler.ts`. */
  entry: string;
  /**
   * Files the function reads from disk at run time instead of importing (the reference page's
   * renderer, ~1.9 MB, would otherwise sit in the JS bundle): copied into the function's code next
   * to `index.mjs`. `from` is an absolute path inside the project, `to` relative to the bundle.
   */
  bundledFiles?: readonly BundledFile[];
  /** Encrypts the function's log group (its key policy must admit CloudWatch Logs). */
  logsKey?: IKey;
  /**
   * Node flags on top of the runtime's (see infra/function-tuning.ts): the exec wrapper is bundled next
   * to `index.mjs` and named by AWS_LAMBDA_EXEC_WRAPPER, the flags in its environment.
   */
  nodeFlags?: readonly string[];
  /**
   * Modules the bundle takes from elsewhere (esbuild `alias`): module name → a file relative to the
   * project root, where esbuild runs when it bundles locally (as here: it is a dev dependency).
   */
  aliases?: Readonly<Record<string, string>>;
  /** Secrets it reads: each granted (GetSecretValue) and named by its variable; adds the extension. */
  secrets?: readonly SecretRead[];
}

export interface BundledFile {
  from: string;
  to: string;
  /** A script Lambda runs (the exec wrapper): mode 755 in the code, whatever the checkout's mode. */
  executable?: boolean;
}

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** A source outside the project, or a target outside the bundle, is a mistake caught at synth. */
function checkBundledFile({ from, to }: BundledFile): void {
  const source = relative(projectRoot, from);
  if (!isAbsolute(from) || source.startsWith('..') || isAbsolute(to) || to.split(/[\\/]/).includes('..')) {
    throw new Error(
      `bundled file ${from} → ${to}: the source must be inside the project, the target inside the bundle`,
    );
  }
}

/**
 * The shell commands of NodejsFunction's `afterBundling` hook. Sources go through the bundler's
 * input folder (the project root locally, its mount point in a container build).
 */
function copyCommands(files: readonly BundledFile[], inputDir: string, outputDir: string): string[] {
  return files.flatMap(({ from, to, executable }) => {
    const target = join(outputDir, to);
    return [
      `mkdir -p ${shellQuote(dirname(target))}`,
      `cp ${shellQuote(join(inputDir, relative(projectRoot, from)))} ${shellQuote(target)}`,
      ...(executable ? [`chmod 755 ${shellQuote(target)}`] : []),
    ];
  });
}

/** A Lambda function with the service's runtime, bundling and logging defaults. */
export class ServiceFunction extends NodejsFunction {
  constructor(
    scope: Construct,
    id: string,
    {
      bundledFiles: ownFiles = [],
      logsKey,
      nodeFlags = [],
      aliases = {},
      secrets = [],
      ...props
    }: ServiceFunctionProps,
  ) {
    const wrapped = nodeFlags.length > 0;
    const bundledFiles = wrapped
      ? [...ownFiles, { from: execWrapper.source, to: execWrapper.target, executable: true }]
      : ownFiles;
    bundledFiles.forEach(checkBundledFile);
    const logGroup =
      props.logGroup ??
      new LogGroup(scope, `${id}Logs`, {
        retention: RetentionDays.ONE_MONTH,
        ...(logsKey && { encryptionKey: logsKey }),
      });
    super(scope, id, {
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      // API Gateway's integration timeout: a longer-running API function would only be cut off.
      timeout: Duration.seconds(29),
      tracing: Tracing.ACTIVE,
      handler: 'handler',
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      ...props,
      ...(secrets.length > 0 && { paramsAndSecrets: secretsExtension }),
      entry: join(projectRoot, props.entry),
      ...(wrapped && {
        environment: {
          ...props.environment,
          AWS_LAMBDA_EXEC_WRAPPER: execWrapper.lambdaPath,
          [execWrapper.flagsVar]: nodeFlags.join(' '),
        },
      }),
      logGroup,
      bundling: {
        minify: true,
        format: OutputFormat.ESM,
        target: 'node22',
        sourceMap: false,
        externalModules: ['@aws-sdk/*'],
        mainFields: ['module', 'main'],
        // Some CommonJS dependencies call require(); an ESM bundle has none unless we make one.
        // Aliased: a bundled ESM dependency may import createRequire itself (pdfkit does).
        banner:
          "import { createRequire as __bannerCreateRequire } from 'module'; const require = __bannerCreateRequire(import.meta.url);",
        ...(bundledFiles.length > 0 && {
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (inputDir: string, outputDir: string) =>
              copyCommands(bundledFiles, inputDir, outputDir),
          },
        }),
        ...props.bundling,
        esbuildArgs: {
          ...Object.fromEntries(Object.entries(aliases).map(([name, file]) => [`--alias:${name}`, file])),
          ...props.bundling?.esbuildArgs,
        },
      },
    });
    acknowledge(this, {
      'AwsSolutions-L1': reasons.runtimePin,
      'Serverless-LambdaLatestVersion': reasons.runtimePin,
      'Serverless-LambdaDLQ': reasons.noAsyncInvocations,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]':
        "CDK's default execution role policy: logs:CreateLogGroup/CreateLogStream/PutLogEvents only; the function writes to its own KMS-encrypted log group.",
      'AwsSolutions-IAM5[Resource::*]':
        "CDK's X-Ray grant for active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords), which takes no resource (and, for a rotation function, CDK's secretsmanager:GetRandomPassword, likewise). Every grant of our own names its resources (see the template tests).",
    });
    for (const { secret, env } of secrets) {
      this.addEnvironment(env, secret.secretArn);
      secret.grantRead(this);
    }
  }

  /** The table and its indexes (the service's own by default), each by name: no `index/*`. */
  bindTable(
    table: ITable,
    access: 'read' | 'readWrite',
    indexes: readonly string[] = tableDefinition.globalIndexes.map((index) => index.name),
  ): this {
    this.addToRolePolicy(
      new PolicyStatement({
        actions: [...tableActions[access]],
        resources: [table.tableArn, ...indexes.map((index) => `${table.tableArn}/index/${index}`)],
      }),
    );
    this.addEnvironment(TABLE_ENV, table.tableName);
    return this;
  }

  bindQueue(queue: IQueue, definition: QueueDefinition): this {
    queue.grantSendMessages(this);
    this.addEnvironment(definition.envVar, queue.queueUrl);
    return this;
  }

  bindBucket(bucket: IBucket, definition: BucketDefinition, access: keyof typeof bucketActions): this {
    this.addToRolePolicy(
      new PolicyStatement({ actions: [...bucketActions[access]], resources: [bucket.arnForObjects('*')] }),
    );
    const stack = Stack.of(this);
    const bucketId = stack.resolve(stack.getLogicalId(bucket.node.defaultChild as CfnElement));
    acknowledge(this, {
      [`AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`]:
        "Objects are named at run time (one per export job, under a generated id); the grant names this one bucket's objects and only the object actions asked for.",
    });
    // Objects under a customer key: reading decrypts, writing generates the object's data key, and
    // a multipart upload decrypts it again to complete (large transcripts fail without it).
    const key = bucket.encryptionKey;
    if (key) key.grantDecrypt(this);
    if (key && access !== 'read') key.grant(this, 'kms:GenerateDataKey');
    this.addEnvironment(definition.envVar, bucket.bucketName);
    return this;
  }
}
