import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type NestedStack, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { routeTable } from '../../functions/routes';
import { ORG_ID_PLACEHOLDER } from '../../infra/constructs/log-queries';
import { projectRoot } from '../../infra/constructs/service-function';
import {
  MAX_LOG_GROUPS_PER_RULE,
  noisyNeighbourDefaults,
  TenantInsights,
  tenantRuleDefinitions,
} from '../../infra/constructs/tenant-insights';
import { ServiceStack } from '../../infra/stacks/service-stack';
import { type CfnResource, referencedId, synthesize, tagValue } from './synth';

/**
 * The noisy neighbour in CloudWatch (infra/constructs/tenant-insights.ts): Contributor Insights rules
 * over every API function's access lines, their widgets on the dashboard, the share alarm, and the
 * saved query of one organization's routes.
 */

const { resources, ofType } = synthesize();

/** A `Fn::Join` of strings and references, as text: each reference becomes what it names (`AWS::Region`…). */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) throw new Error(`not a string or a join: ${JSON.stringify(value)}`);
  return join[1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const id = referencedId(part);
      if (id) return id;
      throw new Error(`unexpected part ${JSON.stringify(part)}`);
    })
    .join(join[0]);
}

interface RuleBody {
  Schema: { Name: string; Version: number };
  LogGroupNames: string[];
  LogFormat: string;
  Contribution: { Keys: string[]; ValueOf?: string; Filters: Record<string, unknown>[] };
  AggregateOn: string;
}

const rules = ofType('AWS::CloudWatch::InsightRule').map(([id, rule]) => ({
  id,
  name: rule.Properties.RuleName as string,
  state: rule.Properties.RuleState as string,
  text: joined(rule.Properties.RuleBody),
  body: JSON.parse(joined(rule.Properties.RuleBody)) as RuleBody,
}));
const rule = (key: keyof typeof tenantRuleDefinitions) => {
  const found = rules.find((candidate) => candidate.name === `TestStack-orgs-by-${key}`);
  if (!found) throw new Error(`no rule for ${key}`);
  return found;
};

/** The log group of every function serving the REST API (one per route group). */
const apiLogGroups = ofType('AWS::Lambda::Function')
  .filter(([, fn]) => tagValue(fn, 'service:route-group'))
  .map(([, fn]) => referencedId((fn.Properties.LoggingConfig as { LogGroup?: unknown }).LogGroup));

const accessLine = [
  { Match: '$.message', In: ['request'] },
  { Match: '$.orgId', IsPresent: true },
];

describe('Contributor Insights rules', () => {
  it('ranks organizations by requests, 5XX, 429, time served, write and read units: one rule each', () => {
    expect(rules.map((r) => r.name).sort()).toEqual(
      ['requests', 'server-errors', 'rate-limited', 'duration', 'write-units', 'read-units']
        .map((key) => `TestStack-orgs-by-${key}`)
        .sort(),
    );
    for (const { name, state, body } of rules) {
      expect(state, name).toBe('ENABLED');
      expect(body.Schema, name).toEqual({ Name: 'CloudWatchLogRule', Version: 1 });
      expect(body.LogFormat, name).toBe('JSON');
      expect(body.Contribution.Keys, name).toEqual(['$.orgId']);
      // The access lines of requests whose organization is known; CloudWatch takes 4 filters at most.
      expect(body.Contribution.Filters.slice(0, 2), name).toEqual(accessLine);
      expect(body.Contribution.Filters.length, name).toBeLessThanOrEqual(4);
    }
  });

  it('reads every API function’s log group, and only those', () => {
    expect(apiLogGroups).toHaveLength(routeTable().length);
    expect(apiLogGroups.length).toBeLessThanOrEqual(MAX_LOG_GROUPS_PER_RULE);
    for (const { name, body } of rules) {
      expect([...body.LogGroupNames].sort(), name).toEqual([...apiLogGroups].sort());
      for (const id of body.LogGroupNames) expect(resources[id]?.Type, id).toBe('AWS::Logs::LogGroup');
    }
  });

  it('counts or sums what each dimension says', () => {
    expect(rule('requests').body).toMatchObject({
      AggregateOn: 'Count',
      Contribution: { Filters: accessLine },
    });
    expect(rule('requests').body.Contribution.ValueOf).toBeUndefined();
    expect(rule('server-errors').body).toMatchObject({
      AggregateOn: 'Count',
      Contribution: { Filters: [...accessLine, { Match: '$.status', GreaterThan: 499 }] },
    });
    expect(rule('rate-limited').body).toMatchObject({
      AggregateOn: 'Count',
      Contribution: { Filters: [...accessLine, { Match: '$.status', EqualTo: 429 }] },
    });
    expect(rule('duration').body).toMatchObject({
      AggregateOn: 'Sum',
      Contribution: { ValueOf: '$.durationMs', Filters: accessLine },
    });
    for (const [key, field] of [
      ['write-units', '$.writeCapacityUnits'],
      ['read-units', '$.readCapacityUnits'],
    ] as const) {
      expect(rule(key).body).toMatchObject({
        AggregateOn: 'Sum',
        Contribution: { ValueOf: field, Filters: [...accessLine, { Match: field, GreaterThan: 0 }] },
      });
    }
  });

  it('stays within the rule body limit (8192 characters) with realistic log group names', () => {
    // CloudFormation names a log group `<stack>-<logical id>-<12 characters>`: 100 is generous.
    for (const { name, body, text } of rules) {
      const withNames = text.length + body.LogGroupNames.length * 100;
      expect(withNames, name).toBeLessThan(8192);
    }
  });

  it('refuses at synth more log groups than one rule reads', () => {
    const stack = new Stack(new App(), 'Limits');
    const logs = (count: number, prefix: string) =>
      Array.from({ length: count }, (_, i) => new LogGroup(stack, `${prefix}${i}`));
    expect(
      () =>
        new TenantInsights(stack, 'TooMany', {
          apiLogs: logs(MAX_LOG_GROUPS_PER_RULE + 1, 'Many'),
          stackName: 'Limits',
        }),
    ).toThrow(/at most 20/);
    expect(
      () =>
        new TenantInsights(stack, 'Enough', {
          apiLogs: logs(MAX_LOG_GROUPS_PER_RULE, 'Few'),
          stackName: 'Limits',
        }),
    ).not.toThrow();
  });
});

describe('noisy-neighbour alarm', () => {
  interface Query {
    Id: string;
    Expression?: string;
    Period?: number;
    ReturnData?: boolean;
  }
  const shareAlarm = (resourcesOf: Record<string, CfnResource>) => {
    const found = Object.entries(resourcesOf).filter(
      ([id, resource]) =>
        resource.Type === 'AWS::CloudWatch::Alarm' && /^NoisyNeighbourAlarm[0-9A-F]{8}$/.test(id),
    );
    expect(found).toHaveLength(1);
    return found[0]?.[1] as CfnResource & { DependsOn?: string[] };
  };
  const alarm = shareAlarm(resources);
  const properties = alarm.Properties as {
    Threshold: number;
    EvaluationPeriods: number;
    DatapointsToAlarm: number;
    ComparisonOperator: string;
    TreatMissingData: string;
    AlarmActions: unknown[];
    OKActions: unknown[];
    AlarmDescription: string;
    Metrics: Query[];
  };

  it('fires when one organization takes more than 50% of the requests for 15 minutes (3 × 5 min)', () => {
    expect(properties).toMatchObject({
      Threshold: noisyNeighbourDefaults.sharePercent,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    expect(noisyNeighbourDefaults.sharePercent).toBe(50);
    expect(properties.AlarmDescription).toMatch(/Runbook: docs\/operations\.md#noisy-neighbour$/);
  });

  it('reads the requests rule: its top contributor over its sum, with enough traffic and organizations', () => {
    const requests = 'TestStack-orgs-by-requests';
    const byId = Object.fromEntries(properties.Metrics.map((query) => [query.Id, query]));
    expect(byId.top).toMatchObject({
      Expression: `INSIGHT_RULE_METRIC('${requests}', 'MaxContributorValue')`,
      Period: 300,
      ReturnData: false,
    });
    expect(byId.total).toMatchObject({
      Expression: `INSIGHT_RULE_METRIC('${requests}', 'Sum')`,
      Period: 300,
    });
    expect(byId.organizations).toMatchObject({
      Expression: `INSIGHT_RULE_METRIC('${requests}', 'UniqueContributors')`,
      Period: 300,
    });
    const returned = properties.Metrics.filter((query) => query.ReturnData !== false);
    expect(returned.map((query) => query.Expression)).toEqual([
      `IF(FILL(total, 0) >= ${noisyNeighbourDefaults.minRequests} AND FILL(organizations, 0) >= ${noisyNeighbourDefaults.minOrganizations}, 100 * top / total, 0)`,
    ]);
    // Created after the rule it names.
    expect(alarm.DependsOn).toContain(rule('requests').id);
  });

  it('notifies the alarm topic on ALARM and OK, like every alarm', () => {
    const topicId = ofType('AWS::SNS::Topic')[0]?.[0];
    expect(properties.AlarmActions.map(referencedId)).toEqual([topicId]);
    expect(properties.OKActions.map(referencedId)).toEqual([topicId]);
  });

  it('takes its share from the stack prop, else from context', () => {
    expect(shareAlarm(synthesize({ noisyNeighbourSharePercent: 35 }).resources).Properties.Threshold).toBe(
      35,
    );
    // `cdk synth -c noisyNeighbourSharePercent=40`: context values arrive as strings.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], noisyNeighbourSharePercent: '40' } });
    const stack = new ServiceStack(app, 'ContextStack');
    Template.fromStack(stack.node.findChild('Operations') as NestedStack).hasResourceProperties(
      'AWS::CloudWatch::Alarm',
      { AlarmDescription: Match.stringLikeRegexp('#noisy-neighbour$'), Threshold: 40 },
    );
    expect(() => synthesize({ noisyNeighbourSharePercent: 100 })).toThrow(/below 100/);
  });
});

describe('dashboard', () => {
  const dashboard = ofType('AWS::CloudWatch::Dashboard')[0]?.[1];
  const widgets = (
    JSON.parse(joined(dashboard?.Properties.DashboardBody)) as {
      widgets: { type: string; width: number; properties: Record<string, unknown> }[];
    }
  ).widgets;

  it('shows each rule’s top organizations beside the other widgets', () => {
    const contributors = widgets.filter((widget) => widget.properties.insightRule);
    expect(
      contributors.map((widget) => (widget.properties.insightRule as { ruleName: string }).ruleName),
    ).toEqual(Object.keys(tenantRuleDefinitions).map((key) => `TestStack-orgs-by-${key}`));
    for (const widget of contributors) {
      expect(widget.type).toBe('metric');
      expect(widget.properties).toMatchObject({
        view: 'timeSeries',
        region: 'AWS::Region',
        period: 300,
        insightRule: { maxContributorCount: 10, orderBy: 'Sum' },
        legend: { position: 'bottom' },
      });
    }
    // The REST API's graphs and the per-route rows are still there.
    expect(widgets.length).toBeGreaterThan(contributors.length + routeTable().length * 4);
  });

  it('graphs the top organization’s share against the alarm threshold', () => {
    const share = widgets.find(
      (widget) => widget.properties.title === 'Tenants: top organization, share of requests (%)',
    );
    expect(JSON.stringify(share?.properties.metrics)).toContain(
      "INSIGHT_RULE_METRIC('TestStack-orgs-by-requests', 'MaxContributorValue')",
    );
    expect(share?.properties.annotations).toEqual({
      horizontal: [
        { value: noisyNeighbourDefaults.sharePercent, label: 'noisy-neighbour alarm', yAxis: 'left' },
      ],
    });
  });
});

describe('saved query', () => {
  const query = ofType('AWS::Logs::QueryDefinition')
    .map(([, definition]) => definition.Properties)
    .find(
      (properties) => properties.Name === "TestStack/One organization's requests, errors and slowest routes",
    ) as { QueryString: string; LogGroupNames: unknown[] } | undefined;

  it("gives one organization's requests, 4XX, 429, 5XX and p99 by route, slowest first", () => {
    expect(query).toBeDefined();
    const text = query?.QueryString ?? '';
    expect(text).toContain(`filter orgId = "${ORG_ID_PLACEHOLDER}"`);
    expect(text).toContain('filter message = "request"');
    for (const stat of [
      'count(*) as requests',
      'sum(status >= 400) - sum(status >= 500) as clientErrors',
      'sum(status = 429) as rateLimited',
      'sum(status >= 500) as serverErrors',
      'pct(durationMs, 99) as p99Ms',
    ])
      expect(text).toContain(stat);
    expect(text).toMatch(/as writeUnits by route\n\| sort p99Ms desc\n\| limit 100$/);
  });

  it('reads every API function’s log group', () => {
    expect((query?.LogGroupNames ?? []).map(referencedId)).toEqual(expect.arrayContaining(apiLogGroups));
  });
});

describe('runbook', () => {
  it('says how to find the noisy neighbour, what the alarm means and what to do', () => {
    const runbook = readFileSync(join(projectRoot, 'docs/operations.md'), 'utf8');
    const section = runbook.slice(runbook.indexOf('<a id="noisy-neighbour"></a>'));
    expect(section).toContain('### Noisy neighbour (`NoisyNeighbourAlarm`)');
    for (const part of [
      '**Means:**',
      '**Look at:**',
      '**Do:**',
      'noisyNeighbourSharePercent',
      'rateLimitPerMinute',
    ])
      expect(section).toContain(part);
  });
});
