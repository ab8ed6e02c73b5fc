import { type Statement, statementsOf } from '../../../infra/iam/policy';
import type { CfnResource } from '../synth';

/** The parts of a synthesized template the checks read. */
export interface TemplateJson {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, Record<string, unknown>>;
}

const PSEUDO: Readonly<Record<string, string>> = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'us-east-1',
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'TestStack',
};

/**
 * A CloudFormation value as a string: pseudo parameters and parameter defaults filled in, a
 * resource's `Ref` as `<Ref Id>` and its attributes as `<Id.Attr>`. The same resource gets the same
 * placeholder wherever it is meant, so ARNs built by CDK and by a check compare as strings.
 */
export function resolveValue(value: unknown, template: TemplateJson): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const node = value as Record<string, unknown> | null;
  if (node && typeof node === 'object' && !Array.isArray(node)) {
    if (typeof node.Ref === 'string') {
      const ref = node.Ref;
      const parameter = template.Parameters?.[ref];
      if (PSEUDO[ref]) return PSEUDO[ref];
      if (parameter?.Default !== undefined) return String(parameter.Default);
      return `<Ref ${ref}>`;
    }
    const getAtt = node['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `<${getAtt[0]}.${getAtt[1]}>`;
    const join = node['Fn::Join'];
    if (Array.isArray(join)) {
      const [separator, parts] = join as [string, unknown[]];
      return parts.map((part) => resolveValue(part, template)).join(separator);
    }
    const select = node['Fn::Select'];
    if (Array.isArray(select)) {
      const [index, list] = select as [number, unknown];
      const split = (list as Record<string, unknown>)['Fn::Split'];
      const items = Array.isArray(split)
        ? resolveValue(split[1], template).split(String(split[0]))
        : (list as unknown[]).map((item) => resolveValue(item, template));
      return items[index] ?? `<select ${index}>`;
    }
  }
  return `<unresolved ${JSON.stringify(value)}>`;
}

export type { Statement } from '../../../infra/iam/policy';

/**
 * The statements of a function's execution role: its inline policies and the `AWS::IAM::Policy`
 * resources attached to it. Managed policies are left out: CDK attaches AWSLambdaBasicExecutionRole
 * (logs only) to every function.
 */
export function roleStatements(functionId: string, template: TemplateJson): Statement[] {
  const fn = template.Resources[functionId];
  const roleId = (fn?.Properties.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.[
    'Fn::GetAtt'
  ]?.[0];
  if (!roleId) throw new Error(`${functionId} has no role of the stack`);
  const documents: [string, unknown][] = [];
  for (const inline of (template.Resources[roleId]?.Properties.Policies as unknown[] | undefined) ?? []) {
    documents.push([`${roleId} inline`, (inline as { PolicyDocument: unknown }).PolicyDocument]);
  }
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = (resource.Properties.Roles as unknown[] | undefined) ?? [];
    if (roles.some((role) => (role as { Ref?: string }).Ref === roleId)) {
      documents.push([id, resource.Properties.PolicyDocument]);
    }
  }
  return documents.flatMap(([policy, document]) =>
    statementsOf(document, policy, (value) => resolveValue(value, template)),
  );
}

export { allows, wildcardMatch } from '../../../infra/iam/policy';
