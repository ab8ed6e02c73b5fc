import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { QueryDefinition, QueryString } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Replace in the query editor before running (saved queries take no parameters). */
export const REQUEST_ID_PLACEHOLDER = 'PUT-THE-X-REQUEST-ID-HERE';
export const ORG_ID_PLACEHOLDER = 'PUT-THE-ORG-ID-HERE';

/**
 * The JSON lines the functions write (`shared/logger.ts`, Powertools Logger): every line carries
 * `requestId` (the X-Request-Id answered to the client) and, once known, `orgId`; the access line
 * of each request is `message = "request"` with `method`, `path`, `route` (operation id), `status`,
 * `durationMs`, `callerKind`, `credentialId` (shared/http/middleware/request-context.ts); errors are
 * `level = "ERROR"` with `error.name` / `error.message`. API Gateway's access log (JSON, standard
 * fields) has `requestId` too: the same id when the client sent no X-Request-Id of its own.
 */
export const savedQueries = {
  'request-by-id': {
    title: 'A request by X-Request-Id',
    withAccessLog: true,
    query: new QueryString({
      fields: [
        '@timestamp',
        '@log',
        'level',
        'message',
        'route',
        'status',
        'durationMs',
        'orgId',
        'callerKind',
        'error.name',
        'error.message',
      ],
      filterStatements: [`requestId = "${REQUEST_ID_PLACEHOLDER}"`],
      sort: '@timestamp asc',
      limit: 200,
    }),
  },
  'errors-by-route': {
    title: 'Server errors by route',
    withAccessLog: false,
    query: new QueryString({
      filterStatements: ['message = "request"', 'status >= 500'],
      statsStatements: ['count(*) as errors by route, status'],
      sort: 'errors desc',
      limit: 100,
    }),
  },
  'slowest-routes': {
    title: 'Slowest routes (p99)',
    withAccessLog: false,
    query: new QueryString({
      filterStatements: ['message = "request"'],
      statsStatements: [
        'count(*) as requests, avg(durationMs) as avgMs, pct(durationMs, 50) as p50Ms, pct(durationMs, 99) as p99Ms, max(durationMs) as maxMs by route',
      ],
      sort: 'p99Ms desc',
      limit: 50,
    }),
  },
  'tenant-traffic': {
    title: "One tenant's traffic (orgId)",
    withAccessLog: false,
    query: new QueryString({
      fields: [
        '@timestamp',
        'requestId',
        'method',
        'path',
        'route',
        'status',
        'durationMs',
        'callerKind',
        'credentialId',
        'dynamoRequests',
        'readCapacityUnits',
        'writeCapacityUnits',
      ],
      filterStatements: [`orgId = "${ORG_ID_PLACEHOLDER}"`, 'message = "request"'],
      sort: '@timestamp desc',
      limit: 1000,
    }),
  },
  'organization-routes': {
    title: "One organization's requests, errors and slowest routes",
    withAccessLog: false,
    // A comparison counts 1 where it holds: sum(status >= 500) is the number of 5XX answers.
    query: new QueryString({
      filterStatements: [`orgId = "${ORG_ID_PLACEHOLDER}"`, 'message = "request"'],
      statsStatements: [
        'count(*) as requests, sum(status >= 400) - sum(status >= 500) as clientErrors, sum(status = 429) as rateLimited, sum(status >= 500) as serverErrors, pct(durationMs, 50) as p50Ms, pct(durationMs, 99) as p99Ms, max(durationMs) as maxMs, sum(readCapacityUnits) as readUnits, sum(writeCapacityUnits) as writeUnits by route',
      ],
      sort: 'p99Ms desc',
      limit: 100,
    }),
  },
  'capacity-by-tenant': {
    title: 'DynamoDB capacity by tenant',
    withAccessLog: false,
    query: new QueryString({
      filterStatements: ['message = "request"', 'ispresent(orgId)'],
      statsStatements: [
        'count(*) as requests, sum(readCapacityUnits) as readUnits, sum(writeCapacityUnits) as writeUnits, sum(dynamoThrottles) as throttles by orgId',
      ],
      sort: 'writeUnits desc',
      limit: 100,
    }),
  },
  'errors-by-function': {
    title: 'Errors logged by function',
    withAccessLog: false,
    query: new QueryString({
      filterStatements: ['level = "ERROR"'],
      statsStatements: ['count(*) as errors by @log, message'],
      sort: 'errors desc',
      limit: 100,
    }),
  },
} as const;

export interface LogQueriesProps {
  /** The functions' log groups. */
  functionLogs: readonly ILogGroup[];
  /** API Gateway's access log of the REST API. */
  accessLog: ILogGroup;
  /** Folder of the saved queries in the Logs Insights console. */
  folder: string;
}

/** CloudWatch Logs Insights saved queries over the functions' log groups. */
export class LogQueries extends Construct {
  constructor(scope: Construct, id: string, { functionLogs, accessLog, folder }: LogQueriesProps) {
    super(scope, id);
    for (const [key, { title, query, withAccessLog }] of Object.entries(savedQueries)) {
      new QueryDefinition(this, key, {
        queryDefinitionName: `${folder}/${title}`,
        queryString: query,
        logGroups: withAccessLog ? [...functionLogs, accessLog] : [...functionLogs],
      });
    }
  }
}
