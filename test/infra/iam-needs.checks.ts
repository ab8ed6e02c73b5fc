import { beforeAll, describe, expect, it } from 'vitest';
import { groupEntry } from '../../functions/routes';
import { realtimeConnectionsEntry, workerEntry } from '../../functions/workers';
import { cursorKeyRotationEntry, ROUTE_GROUP_TAG, WORKER_TAG } from '../../infra/stacks/service-stack';
import { type BundleCalls, bundleCalls, eventSourceResources, needsOf, noiseOf } from './helpers/aws-needs';
import { bundleOf } from './helpers/bundle-metafile';
import { allows, roleStatements, type TemplateJson } from './helpers/role-policy';
import { synthesize, tagValue } from './synth';

/**
 * Each function's role against what its code can call: the calls its bundle holds (tree-shaken as
 * deployed), on the resources its environment names (test/infra/helpers/aws-needs.ts). A grant the
 * code needs and the role lacks is AccessDenied in AWS on that path; a grant on a resource the
 * code never names is least-privilege noise. Before this test: BatchWriteItem for the delivery
 * and purge workers, kms:Decrypt and AbortMultipartUpload for the PDF worker were missing, and
 * 20 functions could read the cursor key ring they never read.
 */

const { json } = synthesize();

/** Every function of the stack, named by the tag the stack gives it, with the entry it is bundled from. */
const functions = Object.entries(json.Resources)
  .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
  .map(([id, fn]) => {
    const group = tagValue(fn, ROUTE_GROUP_TAG);
    const worker = tagValue(fn, WORKER_TAG);
    if (group) return { id, name: group, entry: groupEntry(group) };
    if (worker) return { id, name: worker, entry: workerEntry(worker) };
    if (tagValue(fn, 'service:realtime')) return { id, name: 'realtime', entry: realtimeConnectionsEntry };
    if (tagValue(fn, 'service:rotation'))
      return { id, name: 'cursor-key-rotation', entry: cursorKeyRotationEntry };
    return { id, name: id, entry: undefined };
  });
const byName = (name: string) => functions.find((fn) => fn.name === name)?.id ?? name;
const idOf = (type: string, prefix: string) =>
  Object.entries(json.Resources).find(
    ([id, resource]) => resource.Type === type && id.startsWith(prefix),
  )?.[0];
const secretId = idOf('AWS::SecretsManager::Secret', 'CursorSigningKey');
const tableId = idOf('AWS::DynamoDB::GlobalTable', 'Table');

const calls = new Map<string, BundleCalls>();
beforeAll(async () => {
  for (const { id, name, entry } of functions) {
    if (entry) calls.set(id, bundleCalls(await bundleOf(name, entry)));
  }
}, 120_000);

/** What every role lacks, and holds beyond its code, in a template. */
function check(template: TemplateJson) {
  const result = { missing: [] as string[], noise: [] as string[], problems: [] as string[] };
  for (const { id, name } of functions) {
    const found = calls.get(id);
    if (!found) continue;
    const { needs, problems } = needsOf(id, found, template);
    result.problems.push(...problems.map((problem) => `${name}: ${problem}`));
    const statements = roleStatements(id, template);
    for (const need of needs) {
      if (!allows(statements, need.action, need.resource)) {
        result.missing.push(`${name}: ${need.action} on ${need.resource} (${need.because})`);
      }
    }
    for (const noise of noiseOf(statements, needs, eventSourceResources(id, template))) {
      result.noise.push(`${name}: ${noise.actions.join(', ')} on ${noise.resource}`);
    }
  }
  return result;
}

/** The template with every policy statement passed through `edit`. */
function edited(edit: (statement: Record<string, unknown>, policy: string) => void): TemplateJson {
  const copy = structuredClone(json) as TemplateJson;
  for (const [id, resource] of Object.entries(copy.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const document = resource.Properties.PolicyDocument as { Statement: Record<string, unknown>[] };
    for (const statement of document.Statement) edit(statement, id);
  }
  return copy;
}

const withoutActions =
  (actions: readonly string[], onlyPolicy?: string) =>
  (statement: Record<string, unknown>, policy: string) => {
    if (onlyPolicy && policy !== onlyPolicy) return;
    statement.Action = [statement.Action].flat().filter((action) => !actions.includes(String(action)));
  };

/** The logical id of the policy CDK attaches to a function's role. */
function policyOf(functionName: string, template: TemplateJson = json): string {
  const fn = template.Resources[byName(functionName)];
  if (!fn) throw new Error(`no function ${functionName}`);
  const [role] = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'];
  const [id] =
    Object.entries(template.Resources).find(
      ([, resource]) =>
        resource.Type === 'AWS::IAM::Policy' &&
        (resource.Properties.Roles as { Ref?: string }[]).some((ref) => ref.Ref === role),
    ) ?? [];
  if (!id) throw new Error(`no policy on the role of ${functionName}`);
  return id;
}

/** The template with one statement more in the policy of the function's role. */
function granting(functionName: string, statement: Record<string, unknown>): TemplateJson {
  const copy = structuredClone(json) as TemplateJson;
  const policy = copy.Resources[policyOf(functionName, copy)];
  if (!policy) throw new Error(`no policy for ${functionName}`);
  (policy.Properties.PolicyDocument as { Statement: unknown[] }).Statement.push(statement);
  return copy;
}

describe("each function's role and what its code can call", () => {
  it('bundles every function of the stack', () => {
    expect(functions.filter((fn) => !fn.entry).map((fn) => fn.id)).toEqual([]);
    expect(functions.length).toBeGreaterThanOrEqual(20);
    expect(calls.size).toBe(functions.length);
    expect([secretId, tableId]).toEqual([expect.any(String), expect.any(String)]);
  });

  it('tells, for every AWS call in every bundle, what it is authorized as and which resource it names', () => {
    expect(check(json).problems).toEqual([]);
  });

  it("grants every call a function's code can make, on the resource it names", () => {
    expect(check(json).missing).toEqual([]);
  });

  it("grants nothing on a table, bucket, queue, key or secret a function's code never names", () => {
    expect(check(json).noise).toEqual([]);
  });

  it('lets only the functions that read the cursor key ring read its secret', () => {
    const canRead = functions
      .filter(({ id }) =>
        allows(roleStatements(id, json), 'secretsmanager:GetSecretValue', `<Ref ${secretId}>`),
      )
      .map(({ name }) => name);
    const reads = functions
      .filter(
        ({ id, name }) =>
          name === 'cursor-key-rotation' || calls.get(id)?.secretReaders.includes('shared/cursor-keys.ts'),
      )
      .map(({ name }) => name);
    expect(canRead.sort()).toEqual(reads.sort());
    expect(reads).toEqual(expect.arrayContaining(['conversations', 'events', 'cursor-key-rotation']));
  });

  describe('fails where a grant is missing or superfluous (the template edited back to what was found)', () => {
    it('without BatchWriteItem: the delivery and purge workers', () => {
      const { missing } = check(edited(withoutActions(['dynamodb:BatchWriteItem'])));
      expect(missing).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^webhook-delivery: dynamodb:BatchWriteItem on <Table\w+\.Arn> \(BatchWriteCommand/,
          ),
          expect.stringMatching(
            /^conversation-purge: dynamodb:BatchWriteItem on <Table\w+\.Arn> \(BatchWriteCommand/,
          ),
        ]),
      );
    });

    it('without kms:Decrypt on the buckets key and AbortMultipartUpload: the PDF worker', () => {
      const { missing } = check(
        edited(withoutActions(['kms:Decrypt', 's3:AbortMultipartUpload'], policyOf('pdf-transcript'))),
      );
      expect(missing).toEqual([
        expect.stringMatching(
          /^pdf-transcript: s3:AbortMultipartUpload on <ExportsBucket\w+\.Arn>\/.*storage\.putStream\("exports"\): Upload/,
        ),
        expect.stringMatching(
          /^pdf-transcript: kms:Decrypt on <BucketsKey\w+\.Arn> .*putStream\("exports"\): Upload \(SSE-KMS\)/,
        ),
      ]);
    });

    it('with the cursor key ring readable by a function that never reads it, and the table by one that never touches it', () => {
      const cursorRead = {
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: { Ref: secretId },
      };
      expect(check(granting('platform', cursorRead)).noise).toEqual([
        `platform: secretsmanager:GetSecretValue on <Ref ${secretId}>`,
      ]);
      const tableWrite = {
        Effect: 'Allow',
        Action: 'dynamodb:PutItem',
        Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
      };
      expect(check(granting('search-index', tableWrite)).noise).toEqual([
        `search-index: dynamodb:PutItem on <${tableId}.Arn>`,
      ]);
    });
  });
});
