import { Aws, Duration, Stack } from 'aws-cdk-lib';
import { CfnInsightRule, ConcreteWidget, MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { PagingAlarm } from './alarms';

/**
 * CloudWatch's limit on the log groups one Contributor Insights rule reads (the user guide's "you can
 * select as many as 20 log groups"). One rule over all the API functions is what lets an
 * organization's share be read off one rule; past 20 functions, see `TenantInsights`.
 */
export const MAX_LOG_GROUPS_PER_RULE = 20;

/** The noisy-neighbour alarm's defaults (five-minute periods, like every alarm of the stack). */
export const noisyNeighbourDefaults = {
  /** One organization's requests over all organizations' requests, percent. */
  sharePercent: 50,
  /** Judged only with at least this many requests (of all organizations) in a period… */
  minRequests: 100,
  /** …and at least this many organizations: a share means nothing without a neighbour. */
  minOrganizations: 2,
  /** 3 of 3 five-minute periods: 15 minutes. */
  datapoints: 3,
  periods: 3,
} as const;

const period = Duration.minutes(5);

/** A Contributor Insights filter (rule syntax: `In`/`StartsWith` take strings, the comparisons a number). */
type RuleFilter = { Match: string } & (
  | { In: readonly string[] }
  | { GreaterThan: number }
  | { EqualTo: number }
  | { IsPresent: boolean }
);

interface TenantRuleDefinition {
  /** Construct id (logical id prefix). */
  id: string;
  /** Dashboard title. */
  title: string;
  /** What one contributor's value counts (the widget's axis). */
  unit: string;
  aggregateOn: 'Count' | 'Sum';
  /** The access-line field summed (Sum rules only). */
  valueField?: string;
  /** On top of the access-line filters (at most 2 more: a rule takes 4). */
  filters: readonly RuleFilter[];
}

/**
 * Every rule reads the functions' access lines (`message = "request"`, shared/http/middleware/
 * request-context.ts) of requests whose organization is known (`orgId` is appended by the
 * authenticate middleware: 401s, health checks and the public documents have none), one contributor
 * per organization.
 */
const accessLineFilters: RuleFilter[] = [
  { Match: '$.message', In: ['request'] },
  { Match: '$.orgId', IsPresent: true },
];

/**
 * One rule per dimension of "who takes the most". Latency: Contributor Insights aggregates only by
 * Count or Sum (no average or percentile), so the latency rule sums `durationMs`: the time the API
 * functions spent serving each organization, i.e. its share of the functions' concurrency (divide a
 * five-minute value by 300,000 for the executions it kept busy on average). A few slow requests or
 * many fast ones weigh the same, which is what a neighbour feels; the saved query "One organization's
 * requests, errors and slowest routes" gives that organization's p99 per route.
 */
export const tenantRuleDefinitions = {
  requests: {
    id: 'Requests',
    title: 'Top organizations: requests',
    unit: 'requests',
    aggregateOn: 'Count',
    filters: [],
  },
  'server-errors': {
    id: 'ServerErrors',
    title: 'Top organizations: 5XX responses',
    unit: 'responses',
    aggregateOn: 'Count',
    filters: [{ Match: '$.status', GreaterThan: 499 }],
  },
  'rate-limited': {
    id: 'RateLimited',
    title: 'Top organizations: 429 responses (rate limited)',
    unit: 'responses',
    aggregateOn: 'Count',
    filters: [{ Match: '$.status', EqualTo: 429 }],
  },
  duration: {
    id: 'Duration',
    title: 'Top organizations: time served (sum of durationMs)',
    unit: 'ms',
    aggregateOn: 'Sum',
    valueField: '$.durationMs',
    filters: [],
  },
  'write-units': {
    id: 'WriteUnits',
    title: 'Top organizations: DynamoDB write units',
    unit: 'write units',
    aggregateOn: 'Sum',
    valueField: '$.writeCapacityUnits',
    filters: [{ Match: '$.writeCapacityUnits', GreaterThan: 0 }],
  },
  'read-units': {
    id: 'ReadUnits',
    title: 'Top organizations: DynamoDB read units',
    unit: 'read units',
    aggregateOn: 'Sum',
    valueField: '$.readCapacityUnits',
    filters: [{ Match: '$.readCapacityUnits', GreaterThan: 0 }],
  },
} as const satisfies Record<string, TenantRuleDefinition>;

export type TenantRuleKey = keyof typeof tenantRuleDefinitions;

/** The rule of that dimension, by name: unique in the account and region, hence the stack's name. */
export const tenantRuleName = (stackName: string, key: TenantRuleKey): string =>
  `${stackName}-orgs-by-${key}`;

/** The rule body (JSON) CloudWatch reads: `LogGroupNames` may hold tokens (render it with `toJsonString`). */
export function tenantRuleBody(
  key: TenantRuleKey,
  logGroupNames: readonly string[],
): Record<string, unknown> {
  const definition: TenantRuleDefinition = tenantRuleDefinitions[key];
  return {
    Schema: { Name: 'CloudWatchLogRule', Version: 1 },
    LogGroupNames: [...logGroupNames],
    LogFormat: 'JSON',
    Contribution: {
      Keys: ['$.orgId'],
      ...(definition.valueField && { ValueOf: definition.valueField }),
      Filters: [...accessLineFilters, ...definition.filters],
    },
    AggregateOn: definition.aggregateOn,
  };
}

export interface TenantRule {
  key: TenantRuleKey;
  ruleName: string;
  title: string;
  unit: string;
  rule: CfnInsightRule;
}

export interface TenantInsightsProps {
  /** The log groups of the functions that write access lines (the REST API's route groups). */
  apiLogs: readonly ILogGroup[];
  /** Prefix of the rule names (the service stack's name). */
  stackName: string;
  /** Percent of all organizations' requests one organization may take (default 50). */
  sharePercent?: number;
}

/**
 * CloudWatch Contributor Insights over the API functions' access lines: the top organizations by
 * requests, DynamoDB write and read units, 5XX, 429 and time served, one rule each over every API
 * function's log group, and the noisy-neighbour alarm (one organization's share of the requests) for
 * the service's alarm topic.
 *
 * A rule reads at most 20 log groups: with more API functions, synth fails here rather than at
 * deploy. Splitting the rules by function would split each organization's count over several rules,
 * and no metric math adds one contributor across rules: the way out then is one log group for the
 * API functions' access lines (a subscription or a shared group), or rules per function group
 * without the share alarm (docs/operations.md, "noisy-neighbour").
 */
export class TenantInsights extends Construct {
  readonly rules: readonly TenantRule[];
  /** The requests rule, which the share alarm reads (by name: the alarm should depend on it). */
  readonly requestsRule: CfnInsightRule;
  /** The top organization's share of all organizations' requests, percent (0 below the traffic floor). */
  readonly topShare: MathExpression;
  /** For `ServiceAlarms.add`: fires when one organization takes more than `sharePercent` for 15 minutes. */
  readonly shareAlarm: PagingAlarm;
  readonly sharePercent: number;

  constructor(scope: Construct, id: string, props: TenantInsightsProps) {
    super(scope, id);
    const { apiLogs, stackName } = props;
    const sharePercent = props.sharePercent ?? noisyNeighbourDefaults.sharePercent;
    if (!(sharePercent > 0 && sharePercent < 100)) {
      throw new Error(`noisyNeighbourSharePercent must be above 0 and below 100, not ${sharePercent}`);
    }
    if (apiLogs.length === 0) throw new Error('TenantInsights: no API function log groups');
    if (apiLogs.length > MAX_LOG_GROUPS_PER_RULE) {
      throw new Error(
        `TenantInsights: ${apiLogs.length} API function log groups, and a Contributor Insights rule reads at most ${MAX_LOG_GROUPS_PER_RULE}: see docs/operations.md#noisy-neighbour (what to do past 20 API functions)`,
      );
    }
    const stack = Stack.of(this);
    const logGroupNames = apiLogs.map((group) => group.logGroupName);
    this.rules = (Object.keys(tenantRuleDefinitions) as TenantRuleKey[]).map((key) => {
      const ruleName = tenantRuleName(stackName, key);
      const { id: ruleId, title, unit } = tenantRuleDefinitions[key];
      const rule = new CfnInsightRule(this, `${ruleId}Rule`, {
        ruleName,
        ruleState: 'ENABLED',
        ruleBody: stack.toJsonString(tenantRuleBody(key, logGroupNames)),
      });
      return { key, ruleName, title, unit, rule };
    });

    const requests = tenantRuleName(stackName, 'requests');
    const requestsRule = this.rules.find((rule) => rule.key === 'requests')?.rule;
    if (!requestsRule) throw new Error('TenantInsights: no requests rule');
    this.requestsRule = requestsRule;
    const insight = (metric: 'MaxContributorValue' | 'Sum' | 'UniqueContributors') =>
      new MathExpression({
        expression: `INSIGHT_RULE_METRIC('${requests}', '${metric}')`,
        usingMetrics: {},
        period,
      });
    const { minRequests, minOrganizations } = noisyNeighbourDefaults;
    this.topShare = new MathExpression({
      expression: `IF(FILL(total, 0) >= ${minRequests} AND FILL(organizations, 0) >= ${minOrganizations}, 100 * top / total, 0)`,
      usingMetrics: {
        top: insight('MaxContributorValue'),
        total: insight('Sum'),
        organizations: insight('UniqueContributors'),
      },
      period,
      label: 'Top organization: share of requests (%)',
    });
    this.sharePercent = sharePercent;
    this.shareAlarm = {
      metric: this.topShare,
      summary: `Tenants: one organization made more than ${sharePercent}% of all organizations' requests for 15 minutes (with at least ${minRequests} requests from ${minOrganizations} or more organizations every 5 minutes).`,
      runbook: 'noisy-neighbour',
      threshold: sharePercent,
      datapoints: noisyNeighbourDefaults.datapoints,
      periods: noisyNeighbourDefaults.periods,
    };
  }
}

export interface ContributorInsightsWidgetProps {
  title: string;
  ruleName: string;
  /** Left axis label. */
  unit: string;
  /** Contributors drawn, default 10. */
  maxContributors?: number;
  width?: number;
  height?: number;
}

/**
 * A dashboard graph of a Contributor Insights rule's top contributors, one line each (CDK has no
 * widget for it): the `insightRule` form of a metric widget, as the console's own "Add to
 * dashboard" writes it.
 */
export class ContributorInsightsWidget extends ConcreteWidget {
  private readonly props: ContributorInsightsWidgetProps;

  constructor(props: ContributorInsightsWidgetProps) {
    super(props.width ?? 8, props.height ?? 6);
    this.props = props;
  }

  toJson(): unknown[] {
    return [
      {
        type: 'metric',
        width: this.width,
        height: this.height,
        x: this.x,
        y: this.y,
        properties: {
          title: this.props.title,
          view: 'timeSeries',
          stacked: false,
          region: Aws.REGION,
          period: period.toSeconds(),
          insightRule: {
            maxContributorCount: this.props.maxContributors ?? 10,
            orderBy: 'Sum',
            ruleName: this.props.ruleName,
          },
          legend: { position: 'bottom' },
          yAxis: { left: { label: this.props.unit, showUnits: false } },
        },
      },
    ];
  }
}
