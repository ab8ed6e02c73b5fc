import { type CfnElement, CustomResource, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpointAwsService,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  AuroraPostgresEngineVersion,
  ClusterInstance,
  Credentials,
  DatabaseCluster,
  DatabaseClusterEngine,
} from 'aws-cdk-lib/aws-rds';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { SCHEMA_SQL } from '../../shared/search/schema';
import { acknowledge } from '../nag';
import { ServiceFunction, type ServiceFunctionProps } from './service-function';

/** The role the functions connect as (IAM authentication); created by the schema migration. */
export const SEARCH_DB_USER = 'search_app';
export const SEARCH_DB_NAME = 'search';

/**
 * The cluster's parameters: connections without TLS are refused (the functions verify the server's
 * certificate, see `auroraTls`), and no JIT compilation, as the local server runs
 * (infra/local/emulators.ts): the index's short queries pay its compile time and gain nothing
 * (docs/decisions.md, "Search: one row per conversation").
 */
export const SEARCH_CLUSTER_PARAMETERS = { 'rds.force_ssl': '1', jit: '0' };

/**
 * The search index in AWS (docs/decisions.md, "Search engine"): Aurora PostgreSQL Serverless v2
 * that pauses at 0 ACUs when idle, in a VPC of isolated subnets (no NAT, no internet path). The
 * functions that use it join the VPC and connect with the `pg` driver and IAM authentication
 * tokens; DynamoDB through a gateway endpoint (free), Secrets Manager (cursor keys, the admin
 * secret of the migration) through an interface endpoint.
 */
export class SearchIndex extends Construct {
  readonly vpc: Vpc;
  readonly cluster: DatabaseCluster;
  private readonly clients: SecurityGroup;

  constructor(scope: Construct, id: string, props: { logsKey: IKey }) {
    super(scope, id);
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      gatewayEndpoints: { DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB } },
    });
    acknowledge(this.vpc, {
      'AwsSolutions-VPC7':
        'Isolated subnets with no internet path that carry only the search functions’ database and endpoint traffic; the database logs connections itself (postgresql log export).',
    });
    const secrets = this.vpc.addInterfaceEndpoint('SecretsManager', {
      service: InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    });
    acknowledge(secrets, {
      'AwsSolutions-EC23':
        'CDK’s endpoint security group admits HTTPS from the VPC’s own CIDR (an intrinsic cdk-nag cannot read), not from anywhere.',
    });

    this.clients = new SecurityGroup(this, 'Clients', {
      vpc: this.vpc,
      description: 'Functions that connect to the search index',
      allowAllOutbound: true,
    });
    this.cluster = new DatabaseCluster(this, 'Cluster', {
      engine: DatabaseClusterEngine.auroraPostgres({ version: AuroraPostgresEngineVersion.VER_17_5 }),
      credentials: Credentials.fromGeneratedSecret('postgres'),
      defaultDatabaseName: SEARCH_DB_NAME,
      writer: ClusterInstance.serverlessV2('Writer', { publiclyAccessible: false }),
      // 0: the cluster pauses when idle (no compute cost at rest) and resumes on the next connection.
      serverlessV2MinCapacity: 0,
      serverlessV2MaxCapacity: 16,
      iamAuthentication: true,
      parameters: SEARCH_CLUSTER_PARAMETERS,
      storageEncrypted: true,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.SNAPSHOT,
      backup: { retention: Duration.days(7) },
      cloudwatchLogsExports: ['postgresql'],
      vpc: this.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
    });
    this.cluster.connections.allowFrom(this.clients, Port.tcp(5432), 'search functions');
    acknowledge(this.cluster, {
      'AwsSolutions-RDS10':
        'Deletion protection is on; the finding is about the instance, which the cluster protects.',
      'AwsSolutions-RDS11':
        'The default port inside isolated subnets reachable only from the search functions’ security group.',
      'AwsSolutions-SMG4':
        'The generated admin secret is read only by the schema migration at deployment; the functions authenticate with IAM tokens. Rotation needs a rotation function in this VPC: a later step.',
      'AwsSolutions-RDS14':
        'Backtrack is an Aurora MySQL feature; this is Aurora PostgreSQL, recovered from its automated backups (7 days).',
    });

    // The schema, and the role the functions log in as, at every deployment (idempotent).
    const migration = new ServiceFunction(this, 'Migration', {
      entry: 'functions/search/migrate.ts',
      description: 'creates the search index schema and its IAM-authenticated role',
      timeout: Duration.minutes(5),
      logsKey: props.logsKey,
      ...this.networkProps(),
      environment: { SEARCH_DB_USER, SEARCH_DB_NAME },
      ...(this.cluster.secret && {
        secrets: [{ secret: this.cluster.secret, env: 'SEARCH_DB_ADMIN_SECRET_ARN' }],
      }),
    });
    acknowledge(migration, { [VPC_ACCESS_POLICY]: VPC_ACCESS_REASON });
    const provider = new Provider(this, 'MigrationProvider', { onEventHandler: migration });
    acknowledge(provider, {
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]':
        "The custom resource framework's own function (CDK), which only relays the migration's answer to CloudFormation.",
      [`AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(migration.node.defaultChild as CfnElement)}.Arn>:*]`]:
        'CDK’s provider framework invokes the migration function and its versions.',
      'AwsSolutions-L1': `${FRAMEWORK} its runtime is CDK’s choice.`,
      'Serverless-LambdaDLQ': `${FRAMEWORK} CloudFormation invokes it synchronously.`,
      'Serverless-LambdaDefaultMemorySize': `${FRAMEWORK} its memory is CDK’s default.`,
      'Serverless-LambdaLatestVersion': `${FRAMEWORK} its runtime is CDK’s choice.`,
      'Serverless-LambdaTracing': `${FRAMEWORK} nothing in it is worth a trace.`,
    });
    const schema = new CustomResource(this, 'Schema', {
      serviceToken: provider.serviceToken,
      // Run again when the schema's statements change.
      properties: { version: String(schemaVersion()) },
    });
    schema.node.addDependency(this.cluster);
  }

  /**
   * Places a function in the index's network and lets it connect as the IAM-authenticated role
   * (`rds-db:connect` on that user of this cluster only), with the variables `shared/search/connection.ts` reads.
   */
  connect(fn: ServiceFunction): void {
    acknowledge(fn, { [VPC_ACCESS_POLICY]: VPC_ACCESS_REASON });
    const stack = Stack.of(this);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['rds-db:connect'],
        resources: [
          `arn:${stack.partition}:rds-db:${stack.region}:${stack.account}:dbuser:${this.cluster.clusterResourceIdentifier}/${SEARCH_DB_USER}`,
        ],
      }),
    );
    fn.addEnvironment('SEARCH_DB_HOST', this.cluster.clusterEndpoint.hostname);
    fn.addEnvironment('SEARCH_DB_PORT', String(this.cluster.clusterEndpoint.port));
    fn.addEnvironment('SEARCH_DB_NAME', SEARCH_DB_NAME);
    fn.addEnvironment('SEARCH_DB_USER', SEARCH_DB_USER);
  }

  /** What places a function in the index's network: its props at construction. */
  networkProps(): Pick<ServiceFunctionProps, 'vpc' | 'vpcSubnets' | 'securityGroups'> {
    return {
      vpc: this.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [this.clients],
    };
  }
}

const FRAMEWORK =
  'CDK’s custom resource provider framework function, which only relays the migration’s answer to CloudFormation:';
const VPC_ACCESS_POLICY =
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]';
const VPC_ACCESS_REASON =
  'CDK’s policy for a function in a VPC: creating, describing and deleting its network interfaces, which name no resource ahead of time.';

/** A number that changes with the schema's statements. */
function schemaVersion(): number {
  let hash = 0;
  for (const char of SCHEMA_SQL.join('\n')) hash = (hash * 31 + char.charCodeAt(0)) | 0;
  return hash >>> 0;
}
