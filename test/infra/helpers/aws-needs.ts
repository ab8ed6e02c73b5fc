import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../../bench/options';
import { awsCalls, serviceOf } from '../../../infra/iam/aws-calls';
import { tableDefinition } from '../../../shared/db/table';
import { bucketDefinitions, queueDefinitions } from '../../../shared/resources';
import type { FunctionBundle } from './bundle-metafile';
import { resolveValue, type Statement, type TemplateJson, wildcardMatch } from './role-policy';

/**
 * What a function's code can call in AWS, read from its bundle (tree-shaken as deployed), and what
 * that needs from its role, on the resources its template names. The code is the one source: the
 * calls it constructs (infra/iam/aws-calls.ts says what each is authorized as), the queue or bucket
 * each gateway call names, the key and secret variables it reads. What the derivation cannot tell
 * is a problem, and fails the test, never a silent gap.
 */

/** Queues and buckets are named by the first argument of these objects' methods. */
const gateways = {
  queues: { module: 'shared/queues.ts', services: ['sqs'] },
  storage: { module: 'shared/storage.ts', services: ['s3'] },
} as const;
type GatewayName = keyof typeof gateways;

/**
 * Modules that read a secret (`getSecretString`, shared/secrets.ts), and the variable that
 * names it. A new reader fails the test until it is listed here.
 */
const secretReaders: Readonly<Record<string, string>> = {
  'shared/cursor-keys.ts': 'CURSOR_SIGNING_KEY_SECRET_ARN',
  'shared/discord/token.ts': 'DISCORD_BOT_TOKEN_SECRET_ARN',
};

export interface BundleCalls {
  /** AWS calls constructed (keys of `awsCalls`), each with the modules that construct it. */
  calls: Map<string, Set<string>>;
  /** Gateway calls and the queue or bucket they name: `queues.send("webhook-deliveries")`. */
  named: { gateway: GatewayName; method: string; resource: string }[];
  /** Kept modules that read a secret. */
  secretReaders: string[];
  /** `*_KMS_KEY_ID` variables the code reads: the keys its KMS calls use. */
  kmsKeyVariables: string[];
  problems: string[];
}

const CONSTRUCTED = /\bnew\s+(?:[\w$]+\.)*([\w$]+)\s*\(/g;
const MODULE_HEADER = /^\/\/ (\S+\.(?:[cm]?[jt]s|json))$/m;

/** Classes constructed in some code, by their imported names. */
function constructedIn(code: string, aliases: ReadonlyMap<string, string> = new Map()): string[] {
  return [...code.matchAll(CONSTRUCTED)].map(([, name = '']) => aliases.get(name) ?? name);
}

/** An AWS call: a class of `awsCalls`, or any SDK command (an unknown one is a problem, not skipped). */
const isAwsCall = (name: string) => Object.hasOwn(awsCalls, name) || /Command$/.test(name);

/** esbuild's renamed imports (`GetCommand as GetCommand2`) from the external AWS SDK. */
function sdkAliases(code: string): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const [, list = ''] of code.matchAll(/import\s*\{([^}]*)\}\s*from\s*"@aws-sdk\/[^"]+"/g)) {
    for (const entry of list.split(',')) {
      const [imported = '', local = imported] = entry.trim().split(/\s+as\s+/);
      if (imported) aliases.set(local, imported);
    }
  }
  return aliases;
}

/** Each module's share of an unminified bundle (esbuild heads it `// <path>`; one module may have several). */
function moduleSegments(code: string): Map<string, string> {
  const parts = code.split(MODULE_HEADER);
  const segments = new Map<string, string>();
  for (let i = 1; i < parts.length; i += 2) {
    const path = parts[i] ?? '';
    segments.set(path, (segments.get(path) ?? '') + (parts[i + 1] ?? ''));
  }
  return segments;
}

const methodCache = new Map<GatewayName, Map<string, string[]>>();

/** A gateway's methods and the AWS calls each constructs, read from its source. */
function gatewayMethods(gateway: GatewayName): Map<string, string[]> {
  const cached = methodCache.get(gateway);
  if (cached) return cached;
  const path = join(projectRoot, gateways[gateway].module);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  let object: ts.ObjectLiteralExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      node.name.getText() === gateway &&
      node.initializer &&
      ts.isObjectLiteralExpression(node.initializer)
    ) {
      object = node.initializer;
    } else ts.forEachChild(node, visit);
  };
  visit(source);
  if (!object) throw new Error(`${gateways[gateway].module}: no object literal \`${gateway}\``);
  const methods = new Map(
    object.properties.map((property) => [
      property.name?.getText() ?? '',
      constructedIn(property.getText()).filter(isAwsCall),
    ]),
  );
  methodCache.set(gateway, methods);
  return methods;
}

/** The AWS calls a bundle holds. */
export function bundleCalls({ code, metafile }: FunctionBundle): BundleCalls {
  const problems: string[] = [];
  const aliases = sdkAliases(code);
  const calls = new Map<string, Set<string>>();
  for (const [module, segment] of moduleSegments(code)) {
    for (const name of constructedIn(segment, aliases)) {
      if (!isAwsCall(name)) continue;
      if (!Object.hasOwn(awsCalls, name)) {
        problems.push(`${module} constructs ${name}: add what it is authorized as to infra/iam/aws-calls.ts`);
        continue;
      }
      calls.set(name, (calls.get(name) ?? new Set()).add(module));
    }
  }

  const [output] = Object.values(metafile.outputs);
  const kept = (path: string) => (output?.inputs[path]?.bytesInOutput ?? 0) > 0;
  const readers = kept('shared/secrets.ts')
    ? Object.entries(metafile.inputs)
        .filter(([path, input]) => kept(path) && input.imports.some((i) => i.path === 'shared/secrets.ts'))
        .map(([path]) => path)
    : [];
  if (readers.length > 0) calls.set('getSecretString', new Set(['shared/secrets.ts']));

  const named: BundleCalls['named'] = [];
  for (const [gateway, { module, services }] of Object.entries(gateways) as [
    GatewayName,
    (typeof gateways)[GatewayName],
  ][]) {
    const methods = gatewayMethods(gateway);
    const site = new RegExp(`\\b${gateway}\\d*\\.(\\w+)\\(\\s*("[^"]*")?`, 'g');
    for (const [, method = '', literal] of code.matchAll(site)) {
      if (!methods.has(method)) continue;
      if (!literal) {
        problems.push(
          `${gateway}.${method}(…) names its resource with a non-literal: the test cannot tell which`,
        );
        continue;
      }
      named.push({ gateway, method, resource: JSON.parse(literal) as string });
    }
    // The gateway's calls are in the bundle: some call site must name what they reach.
    const held = [...calls].filter(([, modules]) => modules.has(module)).map(([call]) => call);
    if (held.length > 0 && !named.some((call) => call.gateway === gateway)) {
      problems.push(
        `${module} constructs ${held.join(', ')}, but no \`${gateway}.<method>("…")\` call names a resource`,
      );
    }
    // Elsewhere a queue or bucket call would name a resource the test cannot see.
    for (const [call, modules] of calls) {
      const service = serviceOf(awsCalls[call]?.actions[0] ?? '');
      if (!(services as readonly string[]).includes(service)) continue;
      for (const other of [...modules].filter((m) => m !== module)) {
        problems.push(
          `${other} constructs ${call}: go through ${module}, whose call sites name the resource`,
        );
      }
    }
  }

  const kmsKeyVariables = [
    ...new Set([...code.matchAll(/\bprocess\.env\.([A-Z0-9_]+_KMS_KEY_ID)\b/g)].map(([, name = '']) => name)),
  ];
  return { calls, named, secretReaders: readers, kmsKeyVariables, problems };
}

export interface Need {
  action: string;
  /** Resolved as `resolveValue` resolves the template (placeholders for logical ids). */
  resource: string;
  because: string;
}

const PLACEHOLDER_ID = /^<(?:Ref )?([\w]+)(?:\.\w+)?>/;
const arnPrefix = (service: string) => `arn:aws:${service}:us-east-1:123456789012`;

/** What a function needs from its role: every call its bundle holds, on the resource it names. */
export function needsOf(
  functionId: string,
  calls: BundleCalls,
  template: TemplateJson,
): { needs: Need[]; problems: string[] } {
  const problems = [...calls.problems];
  const needs = new Map<string, Need>();
  const need = (action: string, resource: string, because: string) => {
    const key = `${action} ${resource}`;
    const found = needs.get(key);
    if (found && !found.because.includes(because)) found.because += `; ${because}`;
    if (!found) needs.set(key, { action, resource, because });
  };
  const variables =
    (
      template.Resources[functionId]?.Properties.Environment as
        | { Variables?: Record<string, unknown> }
        | undefined
    )?.Variables ?? {};
  /** The logical id of the resource a variable names, or a problem. */
  const named = (variable: string, why: string): string | undefined => {
    const value = variables[variable];
    const id = value === undefined ? undefined : PLACEHOLDER_ID.exec(resolveValue(value, template))?.[1];
    if (!id) problems.push(`${why}, but ${variable} names no resource in its environment`);
    return id;
  };
  const bucketKey = (bucketId: string): string | undefined => {
    const encryption = template.Resources[bucketId]?.Properties.BucketEncryption as
      | {
          ServerSideEncryptionConfiguration: {
            ServerSideEncryptionByDefault: { KMSMasterKeyID?: unknown };
          }[];
        }
      | undefined;
    const keyId =
      encryption?.ServerSideEncryptionConfiguration[0]?.ServerSideEncryptionByDefault.KMSMasterKeyID;
    return keyId === undefined ? undefined : resolveValue(keyId, template);
  };

  for (const [call, modules] of calls.calls) {
    const because = `${call} in ${[...modules].join(', ')}`;
    const gatewayModule = Object.values(gateways).some((gateway) => modules.has(gateway.module));
    for (const action of awsCalls[call]?.actions ?? []) {
      const service = serviceOf(action);
      if (service === 'dynamodb') {
        const table = named('TABLE_NAME', because);
        if (!table) continue;
        need(action, `<${table}.Arn>`, because);
        if (action === 'dynamodb:Query') {
          for (const index of tableDefinition.globalIndexes)
            need(action, `<${table}.Arn>/index/${index.name}`, because);
        }
      } else if (service === 'kms') {
        if (calls.kmsKeyVariables.length === 0)
          problems.push(`${because}, but the code reads no *_KMS_KEY_ID`);
        for (const variable of calls.kmsKeyVariables) {
          const key = named(variable, because);
          if (key) need(action, `<${key}.Arn>`, `${because} with ${variable}`);
        }
      } else if (service === 'secretsmanager' && call === 'getSecretString') {
        for (const reader of calls.secretReaders) {
          const variable = secretReaders[reader];
          if (!variable) {
            problems.push(
              `${reader} reads a secret by hand: list it and its variable in test/infra/helpers/aws-needs.ts`,
            );
            continue;
          }
          const secret = named(variable, `${reader} reads a secret`);
          if (secret) need(action, `<Ref ${secret}>`, `${reader} via getSecretString`);
        }
      } else if (service === 'secretsmanager') {
        // The SDK's Secrets Manager client is the rotation function's: the secret it rotates.
        const schedules = Object.values(template.Resources).filter(
          (resource) =>
            resource.Type === 'AWS::SecretsManager::RotationSchedule' &&
            resolveValue(resource.Properties.RotationLambdaARN, template) === `<${functionId}.Arn>`,
        );
        if (schedules.length === 0) problems.push(`${because}, but no secret is rotated by it`);
        for (const schedule of schedules)
          need(action, resolveValue(schedule.Properties.SecretId, template), because);
      } else if (service === 'ses') {
        const sender = variables.TRANSCRIPT_EMAIL_FROM;
        if (sender === undefined) {
          problems.push(`${because}, but TRANSCRIPT_EMAIL_FROM is not in its environment`);
          continue;
        }
        // SES authorizes against the verified identity: the address, or its domain. Either may be the one.
        const address = resolveValue(sender, template);
        for (const identity of [address, address.split('@')[1] ?? address]) {
          need(action, `${arnPrefix('ses')}:identity/${identity}`, because);
        }
      } else if (service === 'execute-api') {
        const endpoint = JSON.stringify(variables.REALTIME_ENDPOINT ?? null);
        const api = [...endpoint.matchAll(/"Ref":"(\w+)"/g)]
          .map(([, id = '']) => id)
          .find((id) => template.Resources[id]?.Type === 'AWS::ApiGatewayV2::Api');
        if (!api) problems.push(`${because}, but REALTIME_ENDPOINT names no WebSocket API`);
        else
          need(
            action,
            `${arnPrefix('execute-api')}:<Ref ${api}>/stage/POST/@connections/connection-id`,
            because,
          );
      } else if (!gatewayModule) {
        problems.push(`${because}: no rule tells which ${service} resource it calls`);
      }
    }
  }

  for (const { gateway, method, resource } of calls.named) {
    const because = `${gateway}.${method}("${resource}")`;
    const definition =
      gateway === 'queues'
        ? queueDefinitions.find((queue) => queue.name === resource)
        : bucketDefinitions.find((bucket) => bucket.name === resource);
    if (!definition) {
      problems.push(`${because}: no ${gateway === 'queues' ? 'queue' : 'bucket'} of that name`);
      continue;
    }
    const id = named(definition.envVar, because);
    if (!id) continue;
    for (const call of gatewayMethods(gateway).get(method) ?? []) {
      const { actions, bucketKeyActions = [] } = awsCalls[call] ?? { actions: [] };
      for (const action of actions) {
        need(
          action,
          gateway === 'queues' ? `<${id}.Arn>` : `<${id}.Arn>/an/object/key`,
          `${because}: ${call}`,
        );
      }
      const key = gateway === 'storage' ? bucketKey(id) : undefined;
      for (const action of key ? bucketKeyActions : [])
        need(action, key ?? '', `${because}: ${call} (SSE-KMS)`);
    }
  }
  return { needs: [...needs.values()], problems };
}

/** Actions some code of the service can need: a grant of one of these on a resource needs a reason. */
const codeActions = [
  ...new Set(
    Object.values(awsCalls).flatMap(({ actions, bucketKeyActions = [] }) => [
      ...actions,
      ...bucketKeyActions,
    ]),
  ),
];

/**
 * Resources the event source mappings of a function use with its role (the queue it consumes, the
 * stream it reads, the queue a failed batch goes to): granted by CDK, needed by Lambda, not the code.
 */
export function eventSourceResources(functionId: string, template: TemplateJson): Set<string> {
  const resources = new Set<string>();
  for (const mapping of Object.values(template.Resources)) {
    if (mapping.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    if ((mapping.Properties.FunctionName as { Ref?: string } | undefined)?.Ref !== functionId) continue;
    resources.add(resolveValue(mapping.Properties.EventSourceArn, template));
    const onFailure = (
      mapping.Properties.DestinationConfig as { OnFailure?: { Destination: unknown } } | undefined
    )?.OnFailure;
    if (onFailure) resources.add(resolveValue(onFailure.Destination, template));
  }
  return resources;
}

const INDEX = /\/index\/[^/]+$/;

export interface Noise {
  policy: string;
  actions: readonly string[];
  resource: string;
}

/**
 * Grants of code actions on a resource none of the function's needs names: a table, bucket, queue,
 * key or secret its code never touches. Not judged here: the action lists on a needed resource (the
 * bind calls' access levels), and a needed table's indexes (granted with it; without a Query in the
 * bundle no action applies to them).
 */
export function noiseOf(
  statements: readonly Statement[],
  needs: readonly Need[],
  eventSources: ReadonlySet<string>,
): Noise[] {
  return statements.flatMap((statement) => {
    if (statement.effect !== 'Allow') return [];
    const actions = statement.actions.filter((pattern) =>
      codeActions.some((action) => wildcardMatch(pattern, action, true)),
    );
    if (actions.length === 0) return [];
    return statement.resources
      .filter((resource) => !eventSources.has(resource))
      .filter((resource) => !needs.some((need) => wildcardMatch(resource.replace(INDEX, ''), need.resource)))
      .map((resource) => ({ policy: statement.policy, actions, resource }));
  });
}
