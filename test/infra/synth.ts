import { App, type NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ServiceStack, type ServiceStackProps } from '../../infra/stacks/service-stack';

export interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  Condition?: string;
  DeletionPolicy?: string;
}

/**
 * The service stack synthesized without bundling (the template is what is under test, and esbuild
 * would add seconds per function), with its nested route-alarm and function-alarm stacks.
 */
export function synthesize(props?: ServiceStackProps) {
  if (props === undefined) {
    defaultSynthesis ??= synthesizeWith({});
    return defaultSynthesis;
  }
  return synthesizeWith(props);
}

/**
 * The default stack's synthesis, once per process: test/infra/template.test.ts runs every check of
 * the synthesized template in one process, which synthesized it once per check file before (~4 s each).
 */
let defaultSynthesis: ReturnType<typeof synthesizeWith> | undefined;

function synthesizeWith(props: ServiceStackProps) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ServiceStack(app, 'TestStack', props);
  const template = Template.fromStack(stack);
  const json = template.toJSON() as {
    Resources: Record<string, CfnResource>;
    Parameters: Record<string, Record<string, unknown>>;
    Conditions: Record<string, unknown>;
  };
  const mainResources = json.Resources;
  // The paging alarms, the dashboard and the saved queries (Operations) and the API's method tree
  // (ApiMethods) live in nested stacks (the main stack's resource count): tests read them as if
  // they were in the main template, each
  // parameter the nested stack receives replaced by what the main stack passes it.
  json.Resources = {
    ...mainResources,
    ...inlined(stack, 'Operations', mainResources),
    ...inlined(stack, 'ApiMethods', mainResources),
  };
  const nested = stack.node.tryFindChild('RouteAlarms') as NestedStack | undefined;
  const routeTemplate = nested ? Template.fromStack(nested) : undefined;
  const functionAlarmTemplate = Template.fromStack(stack.node.findChild('FunctionAlarms') as NestedStack);
  const ofType = (type: string, resources = json.Resources): [string, CfnResource][] =>
    Object.entries(resources).filter(([, resource]) => resource.Type === type);
  return {
    app,
    stack,
    template,
    json,
    resources: json.Resources,
    /** The main template's own resources (what CloudFormation's 500 counts). */
    mainResources,
    routeTemplate,
    functionAlarmTemplate,
    ofType,
  };
}

/** A nested stack's resources, its parameters replaced by the values the parent passes in. */
function inlined(
  stack: ServiceStack,
  id: string,
  parent: Record<string, CfnResource>,
): Record<string, CfnResource> {
  const nested = stack.node.findChild(id) as NestedStack;
  const { Resources } = Template.fromStack(nested).toJSON() as { Resources: Record<string, CfnResource> };
  const resource = Object.entries(parent).find(
    ([logicalId, candidate]) => candidate.Type === 'AWS::CloudFormation::Stack' && logicalId.startsWith(id),
  )?.[1];
  const passed = (resource?.Properties.Parameters ?? {}) as Record<string, unknown>;
  const substitute = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(substitute);
    if (value && typeof value === 'object') {
      const ref = (value as { Ref?: unknown }).Ref;
      if (typeof ref === 'string' && Object.keys(value).length === 1 && ref in passed) return passed[ref];
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, substitute(inner)]));
    }
    return value;
  };
  return substitute(Resources) as Record<string, CfnResource>;
}

/** `{ Ref: id }` or `{ 'Fn::GetAtt': [id, attr] }` → id. */
export const referencedId = (value: unknown): string | undefined => {
  const ref = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return ref?.Ref ?? ref?.['Fn::GetAtt']?.[0];
};

export const tagValue = (resource: CfnResource, key: string): string | undefined =>
  (resource.Properties.Tags as { Key: string; Value: string }[] | undefined)?.find((tag) => tag.Key === key)
    ?.Value;
