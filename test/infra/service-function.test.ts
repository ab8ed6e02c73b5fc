import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { groupEntry } from '../../functions/routes';
import { ServiceFunction } from '../../infra/constructs/service-function';
import { bucketDefinitions, queueDefinitions } from '../../shared/resources';

interface Statement {
  Action: string | string[];
}

function synthesize(bind: (fn: ServiceFunction, stack: Stack) => void) {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test');
  const fn = new ServiceFunction(stack, 'Fn', { entry: groupEntry('platform') });
  bind(fn, stack);
  const template = Template.fromStack(stack);
  const [policy] = Object.values(template.findResources('AWS::IAM::Policy'));
  const actions = ((policy?.Properties.PolicyDocument.Statement ?? []) as Statement[]).flatMap(
    (s) => s.Action,
  );
  const [lambda] = Object.values(template.findResources('AWS::Lambda::Function'));
  return { actions, variables: (lambda?.Properties.Environment?.Variables ?? {}) as Record<string, unknown> };
}

describe('ServiceFunction', () => {
  it('grants read-only table access without write actions and sets TABLE_NAME', () => {
    const { actions, variables } = synthesize((fn, stack) =>
      fn.bindTable(
        new TableV2(stack, 'T', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
        'read',
      ),
    );
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    expect(actions.filter((action) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(action))).toEqual([]);
    expect(variables).toHaveProperty('TABLE_NAME');
  });

  it('grants sending to a queue and sets its env var', () => {
    const [definition] = queueDefinitions;
    const { actions, variables } = synthesize((fn, stack) => fn.bindQueue(new Queue(stack, 'Q'), definition));
    expect(actions).toContain('sqs:SendMessage');
    expect(actions).not.toContain('sqs:ReceiveMessage');
    expect(variables).toHaveProperty(definition.envVar);
  });

  it('grants only the object actions asked for on a bucket and sets its env var', () => {
    const [definition] = bucketDefinitions;
    const { actions, variables } = synthesize((fn, stack) =>
      fn.bindBucket(new Bucket(stack, 'B'), definition, 'read'),
    );
    expect(actions.filter((action) => action.startsWith('s3:'))).toEqual(['s3:GetObject']);
    expect(variables).toHaveProperty(definition.envVar);
  });
});
