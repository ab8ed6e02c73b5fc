import { CfnCondition, CfnParameter, Duration, Fn, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  type AlarmProps,
  ComparisonOperator,
  type IMetric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type CfnSubscription, Subscription, SubscriptionProtocol, Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { acknowledge } from '../nag';
import { PERIOD_MINUTES } from '../operations/thresholds';

/** The runbook: every alarm's description ends with its section there. */
export const RUNBOOK = 'docs/operations.md';

export interface PagingAlarm {
  metric: IMetric;
  /** What the alarm means, one sentence; the runbook section says what to do. */
  summary: string;
  /** The section of docs/operations.md (its anchor). */
  runbook: string;
  threshold: number;
  /** Breaching datapoints out of `periods`; both 1 by default. */
  datapoints?: number;
  periods?: number;
  comparisonOperator?: ComparisonOperator;
}

export interface ServiceAlarmsProps {
  /** Encrypts the topic; CloudWatch is allowed to use it to publish. */
  key: IKey;
}

/**
 * Alarms that tell someone: every alarm created through `add` notifies one SNS topic on ALARM and
 * on OK. The topic's e-mail subscription is the stack parameter `AlarmEmail`: left empty, the topic
 * has no subscriber (subscribe a pager or chat integration to it instead).
 */
export class ServiceAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, { key }: ServiceAlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // In the stack's scope so that the parameter keeps its plain name.
    const email = new CfnParameter(stack, 'AlarmEmail', {
      type: 'String',
      default: '',
      allowedPattern: '^$|^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
      description: 'E-mail address the alarm topic notifies (confirm the subscription mail); empty: none',
    });
    const hasEmail = new CfnCondition(this, 'HasAlarmEmail', {
      expression: Fn.conditionNot(Fn.conditionEquals(email.valueAsString, '')),
    });

    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToTheAlarmTopic',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    this.topic = new Topic(this, 'Topic', {
      displayName: `${stack.stackName} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    const subscription = new Subscription(this, 'Email', {
      topic: this.topic,
      protocol: SubscriptionProtocol.EMAIL,
      endpoint: email.valueAsString,
    });
    (subscription.node.defaultChild as CfnSubscription).cfnOptions.condition = hasEmail;
    acknowledge(subscription, {
      'Serverless-SNSRedrivePolicy':
        'An e-mail subscription: undeliverable alarm mail would sit in a queue nobody reads; every alarm stays visible in CloudWatch and on the dashboard, and other subscribers (pager, chat) can be added to the topic.',
    });
    this.action = new SnsAction(this.topic);
  }

  /** An alarm in `scope` (this construct by default) that notifies the topic. */
  add(id: string, alarm: PagingAlarm, scope: Construct = this): Alarm {
    const props: AlarmProps = {
      metric: alarm.metric,
      threshold: alarm.threshold,
      comparisonOperator: alarm.comparisonOperator ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: alarm.periods ?? 1,
      datapointsToAlarm: alarm.datapoints ?? 1,
      // No traffic is no symptom; a metric that stops is caught by the alarms on what feeds it.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `${alarm.summary} Runbook: ${RUNBOOK}#${alarm.runbook}`,
    };
    const created = new Alarm(scope, id, props);
    created.addAlarmAction(this.action);
    created.addOkAction(this.action);
    this.alarms.push(created);
    return created;
  }
}

/** Every alarm is judged on five-minute periods. */
export const alarmPeriod = Duration.minutes(PERIOD_MINUTES);
