/**
 * Write units of single-conversation transactions, item by item, as AWS bills them.
 *
 * DynamoDB Local 3.3 under-reports TransactWriteItems: its table figure adds each distinct per-item
 * charge once (two 1 KB items in one transaction report 2 units, not 4; reproduce with two small
 * Puts in one TransactWriteItems and `ReturnConsumedCapacity: TOTAL`). Section 4b of `npm run
 * bench` shows that figure. Here every table action of the measured request's transactions is
 * priced on its own: the item as committed (read back) is put, alone, into a scratch table inside a
 * one-action transaction (2 × ⌈size / 1 KB⌉, the transactional rate); a ConditionCheck is priced
 * the same on the item it checks, as AWS does (Local charges none). Index units are half Local's:
 * Local doubles an index entry in a transaction, AWS charges it as outside one (docs/decisions.md,
 * "Write units as AWS bills them"); Local also adds equal index charges of one transaction once,
 * so a transaction of several conversations runs low there: the ledger of `bench/tenant-ceiling-main.ts`
 * bills every entry.
 *
 * Standalone: `npx tsx bench/transaction-units.ts`.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type LocalStack, startLocalStack } from '../infra/local/stack';

type Item = Record<string, unknown>;
interface Action {
  kind: 'Put' | 'Update' | 'Delete' | 'ConditionCheck';
  key: { pk: string; sk: string };
}
interface Captured {
  actions: Action[];
  reportedTable: number;
  reportedIndexes: number;
}

const SCRATCH = 'transaction-units-scratch';
let stack: LocalStack | undefined;
try {
  stack = await startLocalStack({ port: 0, seedDemo: true, env: { POWERTOOLS_LOG_LEVEL: 'ERROR' } });
  const { dynamo, db } = await import('../shared/db/client');
  const demo = stack.demo;
  if (!demo) throw new Error('no demo organization');
  await dynamo.send(
    new CreateTableCommand({
      TableName: SCRATCH,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );

  // The functions run in isolates of their own: each reports its invocation's commands (traced:
  // a transaction's actions and its units by table and index) with its answer.
  let capturing: Captured[] | undefined;
  stack.runtime.setDynamoTrace(true);
  stack.runtime.onInvocation((report) => {
    if (!capturing || report.kind !== 'api') return;
    for (const command of report.usage.trace ?? []) {
      if (command.operation !== 'TransactWriteItems') continue;
      const { table = 0, ...indexes } = command.unitsBy;
      capturing.push({
        actions: (command.actions ?? []).map((action) => ({
          kind: action.kind as Action['kind'],
          key: { pk: action.pk, sk: action.sk },
        })),
        reportedTable: table,
        reportedIndexes: Object.values(indexes).reduce((sum, units) => sum + units, 0),
      });
    }
  });

  const request = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await fetch(`${stack?.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? (JSON.parse(text) as Item) : {};
  };
  const kinds: Record<string, string> = {
    DAY: 'day counters',
    OPERATOR_DAY: 'operator counters',
    SURVEY: 'survey',
  };
  const kindOf = (sk: string) => {
    if (sk === 'SURVEY') return 'survey locator';
    const kind = sk.replace(/#.*$/, '');
    return kinds[kind] ?? kind.toLowerCase();
  };

  /** Prices every table action of the request's transactions alone; prints one line. */
  const measure = async (label: string, run: () => Promise<unknown>) => {
    capturing = [];
    await run();
    const captured = capturing;
    capturing = undefined;
    const parts: string[] = [];
    let table = 0;
    let checks = 0;
    let reported = 0;
    let indexes = 0;
    for (const transaction of captured) {
      reported += transaction.reportedTable;
      indexes += transaction.reportedIndexes / 2;
      for (const action of transaction.actions) {
        if (action.kind === 'ConditionCheck') checks++;
        const { Item: item } = await db.send(
          new GetCommand({ TableName: stack?.tableName, Key: action.key, ConsistentRead: true }),
        );
        if (!item) {
          parts.push(`${kindOf(action.key.sk)} (gone) ?`);
          continue;
        }
        const priced = await db.send(
          new TransactWriteCommand({
            TransactItems: [{ Put: { TableName: SCRATCH, Item: item } }],
            ReturnConsumedCapacity: 'TOTAL',
          }),
        );
        const units = priced.ConsumedCapacity?.[0]?.CapacityUnits ?? 0;
        table += units;
        parts.push(`${kindOf(action.key.sk)} ${units}`);
      }
    }
    console.log(
      `${label.padEnd(46)} table ${String(table).padStart(3)} (Local reports ${reported}) + indexes ${indexes} = ${table + indexes} WCU` +
        `${checks ? ` (${checks} ConditionCheck)` : ''} · ${parts.join(', ')}`,
    );
  };

  const key = demo.apiKey;
  const open = async (message?: string) =>
    String(
      (
        await request('POST', '/api/conversations', key, {
          visitorId: demo.visitorId,
          ...(message ? { message } : {}),
        })
      ).id,
    );
  const conversationId = await open('Where is my parcel?');
  // The conversation grows as a busy one does before the measured writes.
  for (let i = 0; i < 3; i++)
    await request('POST', `/api/conversations/${conversationId}/messages`, demo.visitorToken, {
      content: `Hello ${i}`,
    });

  await measure('POST /api/conversations (with a message)', () =>
    request('POST', '/api/conversations', key, { visitorId: demo.visitorId, message: 'Where is my parcel?' }),
  );
  await measure('POST …/messages (API key: operator)', () =>
    request('POST', `/api/conversations/${conversationId}/messages`, key, {
      content: 'It left the depot this morning.',
      operatorId: demo.adminOperatorId,
    }),
  );
  await measure('POST …/messages (visitor)', () =>
    request('POST', `/api/conversations/${conversationId}/messages`, demo.visitorToken, {
      content: 'Thank you!',
    }),
  );
  await measure('PATCH /api/conversations/{id} (priority)', () =>
    request('PATCH', `/api/conversations/${conversationId}`, key, { priority: 'high' }),
  );
  const toClose = await open();
  await measure('PATCH /api/conversations/{id} (close)', () =>
    request('PATCH', `/api/conversations/${toClose}`, key, { status: 'closed' }),
  );
  const three = await Promise.all([open(), open(), open()]);
  await measure('POST /api/conversations/bulk-close (3 ids)', () =>
    request('POST', '/api/conversations/bulk-close', key, { conversationIds: three }),
  );
  const surveyed = await open('Late again');
  await request('PATCH', `/api/conversations/${surveyed}`, key, { operatorId: demo.adminOperatorId });
  let surveyId = '';
  await measure('POST /api/surveys', async () => {
    surveyId = String(
      (await request('POST', '/api/surveys', demo.visitorToken, { conversationId: surveyed, score: 4 })).id,
    );
  });
  await measure('DELETE /api/surveys/{id}', () => request('DELETE', `/api/surveys/${surveyId}`, key));
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await stack?.stop();
}
