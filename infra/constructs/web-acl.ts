import { CfnCondition, CfnParameter, Fn, Stack } from 'aws-cdk-lib';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface RateLimitedWebAclProps {
  /** The REST API stage to protect: `arn:…:apigateway:region::/restapis/<id>/stages/<name>`. */
  stageArn: string;
  /** Something the association must wait for (the stage itself). */
  dependsOn: Construct;
}

/**
 * An optional WAF web ACL in front of the REST stage with one rate-based rule per client IP,
 * answering 429 in the contract's error envelope. Off unless the stack parameter `EnableWaf` is
 * `true` (a web ACL costs a monthly fee plus a fee per request); `WafRequestsPer5MinutesPerIp`
 * sets the limit. The service's own rate limit (per credential, in the middleware) applies either
 * way: this one stops floods before they cost a Lambda invocation, credentials or not.
 */
export class RateLimitedWebAcl extends Construct {
  readonly enabled: CfnCondition;

  constructor(scope: Construct, id: string, { stageArn, dependsOn }: RateLimitedWebAclProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const enable = new CfnParameter(stack, 'EnableWaf', {
      type: 'String',
      default: 'false',
      allowedValues: ['true', 'false'],
      description: 'Put a WAF web ACL with a per-IP rate-based rule in front of the REST API stage',
    });
    const limit = new CfnParameter(stack, 'WafRequestsPer5MinutesPerIp', {
      type: 'Number',
      default: 6000,
      minValue: 100,
      maxValue: 2_000_000_000,
      description: 'Requests one IP address may send in 5 minutes before WAF answers 429 (with EnableWaf)',
    });
    this.enabled = new CfnCondition(this, 'Enabled', {
      expression: Fn.conditionEquals(enable.valueAsString, 'true'),
    });

    const metrics = (metricName: string) => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName,
    });
    const acl = new CfnWebACL(this, 'Resource', {
      scope: 'REGIONAL',
      description: 'Per-IP rate limit in front of the REST API',
      defaultAction: { allow: {} },
      visibilityConfig: metrics(`${stack.stackName}-web-acl`),
      customResponseBodies: {
        rateLimited: {
          contentType: 'APPLICATION_JSON',
          content: '{"error":{"code":"RATE_LIMITED","message":"Too many requests from this address"}}',
        },
      },
      rules: [
        {
          name: 'RateLimitPerIp',
          priority: 0,
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rateLimited' } } },
          statement: { rateBasedStatement: { limit: limit.valueAsNumber, aggregateKeyType: 'IP' } },
          visibilityConfig: metrics(`${stack.stackName}-rate-limit-per-ip`),
        },
      ],
    });
    acl.cfnOptions.condition = this.enabled;
    const association = new CfnWebACLAssociation(this, 'Association', {
      webAclArn: acl.attrArn,
      resourceArn: stageArn,
    });
    association.cfnOptions.condition = this.enabled;
    association.node.addDependency(dependsOn);
  }
}
