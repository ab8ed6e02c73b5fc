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
export function synthesize(props: ServiceStackProps = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ServiceStack(app, 'TestStack', props);
  const template = Template.fromStack(stack);
  const json = template.toJSON() as {
    Resources: Record<string, CfnResource>;
    Parameters: Record<string, Record<string, unknown>>;
    Conditions: Record<string, unknown>;
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
    routeTemplate,
    functionAlarmTemplate,
    ofType,
  };
}

/** `{ Ref: id }` or `{ 'Fn::GetAtt': [id, attr] }` → id. */
export const referencedId = (value: unknown): string | undefined => {
  const ref = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return ref?.Ref ?? ref?.['Fn::GetAtt']?.[0];
};

export const tagValue = (resource: CfnResource, key: string): string | undefined =>
  (resource.Properties.Tags as { Key: string; Value: string }[] | undefined)?.find((tag) => tag.Key === key)
    ?.Value;
