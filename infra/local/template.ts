import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Statement, statementsOf } from '../iam/policy';

/**
 * The synthesized CloudFormation template, as the local runtime reads it: each function's
 * `Environment` and execution role. Rendered by `synth-template.ts` in a child process (offline, no
 * bundling: ~3–10 s) and cached under `node_modules/.cache/local-template/` by a hash of the
 * sources that shape it, so a start with unchanged code reads a file instead.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = join(ROOT, 'node_modules/.cache/local-template');
/** What the template is made of: the stack, the route table and workers, the resource definitions. */
const SOURCES = ['infra', 'functions', 'shared', 'package.json', 'package-lock.json'];

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface Template {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, { Default?: unknown }>;
}

function sourceHash(): string {
  const hash = createHash('sha256');
  const walk = (path: string) => {
    const full = join(ROOT, path);
    if (!existsSync(full)) return;
    if (path.endsWith('.json') || path.endsWith('.ts')) {
      hash.update(path).update(readFileSync(full));
      return;
    }
    for (const entry of readdirSync(full, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.isDirectory()) walk(join(path, entry.name));
      else if (entry.name.endsWith('.ts')) walk(join(path, entry.name));
    }
  };
  for (const source of SOURCES) walk(source);
  return hash.digest('hex').slice(0, 20);
}

/** The template of this checkout: from the cache, else synthesized (and cached). */
export async function loadTemplate(progress: (line: string) => void = () => undefined): Promise<Template> {
  const file = join(CACHE_DIR, `${sourceHash()}.json`);
  if (!existsSync(file)) {
    const t0 = Date.now();
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'infra/local/synth-template.ts'), file],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
    progress(`template synthesized in ${Date.now() - t0} ms (cached in ${relative(ROOT, file)})`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as Template;
}

// ---------------------------------------------------------------------------------------------

export type FunctionKind = 'api' | 'websocket' | 'worker';

/** One Lambda function of the template, in the template's own terms (values unresolved). */
export interface TemplateFunction {
  /** The route group, worker or `realtime`: the name the local runtime knows it by. */
  name: string;
  kind: FunctionKind;
  logicalId: string;
  /** The execution role's logical id. */
  roleName: string;
  memorySize: number;
  timeoutSeconds: number;
  variables: Record<string, unknown>;
  /** The execution role's policy documents (inline and attached `AWS::IAM::Policy`), by origin. */
  policies: [string, unknown][];
}

const TAGS: readonly [string, FunctionKind][] = [
  ['service:route-group', 'api'],
  ['service:worker', 'worker'],
  ['service:realtime', 'websocket'],
];

const tagsOf = (resource: CfnResource): { Key: string; Value: string }[] =>
  (resource.Properties?.Tags as { Key: string; Value: string }[] | undefined) ?? [];

/** The service's functions (route groups, `realtime`, workers); CDK's helper functions are left out. */
export function templateFunctions(template: Template): Map<string, TemplateFunction> {
  const functions = new Map<string, TemplateFunction>();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const tags = tagsOf(resource);
    const found = TAGS.map(([key, kind]) => [tags.find((tag) => tag.Key === key), kind] as const).find(
      ([tag]) => tag,
    );
    if (!found?.[0]) continue;
    const [tag, kind] = found;
    const name = kind === 'websocket' ? 'realtime' : tag.Value;
    const properties = resource.Properties ?? {};
    const roleId = (properties.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
    const policies: [string, unknown][] = [];
    if (roleId) {
      for (const inline of (template.Resources[roleId]?.Properties?.Policies as unknown[] | undefined) ?? [])
        policies.push([`${roleId} inline`, (inline as { PolicyDocument: unknown }).PolicyDocument]);
      for (const [id, policy] of Object.entries(template.Resources)) {
        if (policy.Type !== 'AWS::IAM::Policy') continue;
        const roles = (policy.Properties?.Roles as { Ref?: string }[] | undefined) ?? [];
        if (roles.some((role) => role.Ref === roleId)) policies.push([id, policy.Properties?.PolicyDocument]);
      }
    }
    functions.set(name, {
      name,
      kind,
      logicalId,
      roleName: roleId ?? `${logicalId}Role`,
      memorySize: Number(properties.MemorySize ?? 128),
      timeoutSeconds: Number(properties.Timeout ?? 3),
      variables:
        (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
      policies,
    });
  }
  return functions;
}

// ---------------------------------------------------------------------------------------------

/** The local stack's resources, which the template's logical ids resolve to. */
export interface LocalResources {
  region: string;
  account: string;
  tableName: string;
  /** Queue definition name (dead-letter queues included) → its local URL and ARN. */
  queues: ReadonlyMap<string, { url: string; arn: string }>;
  /** Bucket variable (`shared/resources.ts`) → the local bucket's name. */
  buckets: Readonly<Record<string, string>>;
  /** Where the local gateway answers: API Gateway's WebSocket callback URL becomes this. */
  gatewayUrl: string;
  /** Stack parameters: the local values (the rest take their defaults). */
  parameters: Readonly<Record<string, string>>;
}

/** A local id for a resource no emulator holds (secrets, keys: the local key service names them so). */
export const localSecretArn = (region: string, account: string, logicalId: string) =>
  `arn:aws:secretsmanager:${region}:${account}:secret:${logicalId}-local`;
export const localKeyId = (logicalId: string) => `local-${logicalId}`;
export const localKeyArn = (region: string, account: string, logicalId: string) =>
  `arn:aws:kms:${region}:${account}:key/${localKeyId(logicalId)}`;
const LOCAL_WEBSOCKET_API = 'local-realtime';

/**
 * Turns template values into local ones: a `Ref`/`Fn::GetAtt` of the table, a queue, a bucket, a
 * secret or a key becomes the local resource's name, URL or ARN, the same everywhere (an
 * environment variable and a policy statement naming one resource agree), parameters their local
 * values, pseudo parameters the local region and account.
 */
export function localResolver(template: Template, local: LocalResources): (value: unknown) => string {
  const { region, account } = local;
  // Buckets carry no tag: the variable a function gets a bucket's name in says which it is.
  const bucketNames = new Map<string, string>();
  for (const fn of templateFunctions(template).values())
    for (const [name, value] of Object.entries(fn.variables)) {
      const ref = (value as { Ref?: string }).Ref;
      const bucket = local.buckets[name];
      if (ref && bucket && template.Resources[ref]?.Type === 'AWS::S3::Bucket') bucketNames.set(ref, bucket);
    }
  const bucketName = (id: string) => bucketNames.get(id) ?? `local-${id.toLowerCase()}`;
  const queueOf = (id: string) => {
    const tag = tagsOf(template.Resources[id] ?? { Type: '' }).find((each) => each.Key === 'service:queue');
    return (
      (tag && local.queues.get(tag.Value)) ?? {
        url: `http://sqs.local/${account}/${id}`,
        arn: `arn:aws:sqs:${region}:${account}:${id}`,
      }
    );
  };
  const tableArn = `arn:aws:dynamodb:${region}:${account}:table/${local.tableName}`;
  const pseudo: Record<string, string> = {
    'AWS::Region': region,
    'AWS::AccountId': account,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': 'ConversationService',
  };

  const ref = (id: string): string => {
    if (pseudo[id]) return pseudo[id];
    const parameter = template.Parameters?.[id];
    if (parameter) {
      const value = local.parameters[id] ?? parameter.Default;
      if (value === undefined) throw new Error(`the local stack has no value for parameter ${id}`);
      return String(value);
    }
    switch (template.Resources[id]?.Type) {
      case 'AWS::DynamoDB::GlobalTable':
      case 'AWS::DynamoDB::Table':
        return local.tableName;
      case 'AWS::SQS::Queue':
        return queueOf(id).url;
      case 'AWS::S3::Bucket':
        return bucketName(id);
      case 'AWS::SecretsManager::Secret':
        return localSecretArn(region, account, id);
      case 'AWS::KMS::Key':
        return localKeyId(id);
      case 'AWS::ApiGatewayV2::Api':
        return LOCAL_WEBSOCKET_API;
      case 'AWS::ApiGatewayV2::Stage':
        return String(template.Resources[id]?.Properties?.StageName ?? 'v1');
      default:
        return `local-${id}`;
    }
  };
  const attribute = (id: string, name: string): string => {
    const type = template.Resources[id]?.Type;
    if (type === 'AWS::DynamoDB::GlobalTable' || type === 'AWS::DynamoDB::Table')
      return name === 'StreamArn' ? `${tableArn}/stream/local` : tableArn;
    if (type === 'AWS::SQS::Queue')
      return name === 'QueueName' ? (queueOf(id).arn.split(':').pop() ?? id) : queueOf(id).arn;
    if (type === 'AWS::S3::Bucket') return name === 'Arn' ? `arn:aws:s3:::${bucketName(id)}` : bucketName(id);
    if (type === 'AWS::KMS::Key') return name === 'Arn' ? localKeyArn(region, account, id) : localKeyId(id);
    return `local-${id}.${name}`;
  };
  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const node = value as Record<string, unknown> | null;
    if (node && typeof node === 'object' && !Array.isArray(node)) {
      if (typeof node.Ref === 'string') return ref(node.Ref);
      const getAtt = node['Fn::GetAtt'];
      if (Array.isArray(getAtt)) return attribute(String(getAtt[0]), String(getAtt[1]));
      const join = node['Fn::Join'];
      if (Array.isArray(join)) {
        const [separator, parts] = join as [string, unknown[]];
        return parts.map(resolve).join(separator);
      }
      const select = node['Fn::Select'];
      if (Array.isArray(select)) {
        const [index, list] = select as [number, unknown];
        const split = (list as Record<string, unknown>)['Fn::Split'];
        const items = Array.isArray(split)
          ? resolve(split[1]).split(String(split[0]))
          : (list as unknown[]).map(resolve);
        const item = items[Number(index)];
        if (item === undefined) throw new Error(`Fn::Select ${index} of ${items.length} items`);
        return item;
      }
    }
    throw new Error(`cannot resolve ${JSON.stringify(value)} locally`);
  };
  return (value) => {
    const resolved = resolve(value);
    // API Gateway's WebSocket callback URL (the push worker's Management API): the local gateway.
    return resolved.startsWith(`https://${LOCAL_WEBSOCKET_API}.execute-api.`) ? local.gatewayUrl : resolved;
  };
}

/** A function as the local runtime runs it: its template environment and role, resolved locally. */
export interface LocalFunction {
  name: string;
  kind: FunctionKind;
  logicalId: string;
  roleName: string;
  memorySize: number;
  timeoutSeconds: number;
  /** Exactly the template's `Environment`, resolved. */
  environment: Record<string, string>;
  statements: Statement[];
}

export function localFunctions(template: Template, local: LocalResources): Record<string, LocalFunction> {
  const resolve = localResolver(template, local);
  const result: Record<string, LocalFunction> = {};
  for (const fn of templateFunctions(template).values()) {
    result[fn.name] = {
      name: fn.name,
      kind: fn.kind,
      logicalId: fn.logicalId,
      roleName: fn.roleName,
      memorySize: fn.memorySize,
      timeoutSeconds: fn.timeoutSeconds,
      environment: Object.fromEntries(
        Object.entries(fn.variables).map(([name, value]) => [name, resolve(value)]),
      ),
      statements: fn.policies.flatMap(([origin, document]) => statementsOf(document, origin, resolve)),
    };
  }
  return result;
}

/** The secrets and keys of the template (the local key service holds them), by logical id. */
export function templateSecretsAndKeys(template: Template): { secrets: string[]; keys: string[] } {
  const ofType = (type: string) =>
    Object.entries(template.Resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([id]) => id);
  return { secrets: ofType('AWS::SecretsManager::Secret'), keys: ofType('AWS::KMS::Key') };
}

/** Bucket name → the ARN of the KMS key its objects are encrypted under (S3 calls KMS for the caller). */
export function localBucketKeys(template: Template, local: LocalResources): Record<string, string> {
  const resolve = localResolver(template, local);
  const keys: Record<string, string> = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::S3::Bucket') continue;
    const rules = (
      resource.Properties?.BucketEncryption as
        | {
            ServerSideEncryptionConfiguration?: {
              ServerSideEncryptionByDefault?: { KMSMasterKeyID?: unknown };
            }[];
          }
        | undefined
    )?.ServerSideEncryptionConfiguration;
    const key = rules?.[0]?.ServerSideEncryptionByDefault?.KMSMasterKeyID;
    if (key) keys[resolve({ Ref: id })] = resolve(key);
  }
  return keys;
}
