import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * Conversation exports through the local gateway, streamed by the exports function: exact JSON
 * and CSV content, the row limit before any byte, redaction, formula-safe cells, filters, the
 * audit entry, tenancy. This file runs its own gateway with a small row limit (5 conversations).
 */
const ROW_LIMIT = 5;
process.env.EXPORT_ROW_LIMIT = String(ROW_LIMIT);
useInProcessStack();

type Json = Record<string, unknown>;
interface ExportedMessage {
  id: string;
  senderType: string;
  senderId: string;
  senderName: string | null;
  content: string;
  createdAt: string;
}
interface Exported extends Json {
  id: string;
  title: string;
  operatorName: string | null;
  messages: ExportedMessage[];
}

const csvRows = (text: string): string[][] => parse(text, { relax_column_count: false }) as string[][];

/**
 * Exports (and the count before them) read the conversations through an index, which may show a
 * write up to 2 s late (the contract): right after writing, a test reads until the export shows what
 * it asserts, for at most 3 s, and then asserts on the last answer.
 */
const exported = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> =>
  eventually(read, done, { timeoutMs: 3_000 });

/** The ids of a CSV export's rows, and of a JSON one's. */
const csvIds = (text: string) =>
  csvRows(text)
    .map((row) => row[0])
    .slice(1);
const jsonIds = (rows: readonly Exported[]) => rows.map((row) => row.id);

/** The same ids, in any order. */
function sameIds(found: readonly (string | undefined)[], wanted: readonly string[]): boolean {
  const sorted = [...found].sort();
  return sorted.length === wanted.length && [...wanted].sort().every((id, i) => id === sorted[i]);
}

async function conversation(
  tenant: Tenant,
  visitorId: string,
  body: Json = {},
): Promise<{ id: string; lastMessageAt: string }> {
  const created = await call<{ id: string; lastMessageAt: string }>('POST', '/api/conversations', {
    token: tenant.apiKey,
    body: { visitorId, ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function say(tenant: Tenant, conversationId: string, content: string, token = tenant.operatorSession) {
  const posted = await call<{ id: string; createdAt: string }>(
    'POST',
    `/api/conversations/${conversationId}/messages`,
    { token, body: { content } },
  );
  expect(posted.status, posted.text).toBe(201);
  return posted.body;
}

describe('GET /api/export/conversations', () => {
  let tenant: Tenant;
  let first: { id: string };
  let second: { id: string };
  let greeting: { id: string; createdAt: string };
  let answer: { id: string; createdAt: string };

  beforeAll(async () => {
    tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey);
    first = await conversation(tenant, visitor.visitor.id, { title: 'Late parcel', message: 'Where is it?' });
    greeting = await say(tenant, first.id, 'Hello, "quoted", with, commas', visitor.token);
    answer = await say(tenant, first.id, 'It ships today.\nSecond line');
    second = await conversation(tenant, visitor.visitor.id, { title: 'Refund', tags: ['billing'] });
  });

  it('streams every conversation with its messages as one JSON array, newest activity first', async () => {
    const response = await exported(
      () => call<Exported[]>('GET', '/api/export/conversations', { token: tenant.apiKey }),
      ({ status, body }) => status === 200 && sameIds(jsonIds(body), [second.id, first.id]),
    );
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('content-disposition')).toMatch(
      /^attachment; filename="conversations-\d{8}T\d{6}Z\.json"$/,
    );
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.body.map((row) => row.id)).toEqual([second.id, first.id]);
    const [newest, older] = response.body;
    const single = await call<Json>('GET', `/api/conversations/${first.id}`, { token: tenant.apiKey });
    // The conversation as the API shows it, plus the operator's name and the messages.
    const { messages, operatorName, ...fields } = older as Exported;
    expect(fields).toEqual(single.body);
    expect(operatorName).toBeNull();
    expect(messages.map((message) => message.content)).toEqual([
      'Where is it?',
      'Hello, "quoted", with, commas',
      'It ships today.\nSecond line',
    ]);
    const reply = messages[2];
    expect(reply).toMatchObject({ id: answer.id, senderType: 'operator', senderName: 'operator one' });
    expect(reply && 'searchVector' in reply).toBe(false);
    expect(newest?.messages).toEqual([]);
    expect(newest?.tags).toEqual(['billing']);
  });

  it('writes CSV on request: a header, one row per conversation, messages flattened in one cell', async () => {
    const response = await call('GET', '/api/export/conversations?format=csv', { token: tenant.apiKey });
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(response.headers.get('content-disposition')).toMatch(
      /filename="conversations-\d{8}T\d{6}Z\.csv"$/,
    );
    expect(response.text.split('\r\n')[0]).toBe(
      'id,title,status,priority,source,visitorId,visitorIdentifier,operatorId,operatorName,tags,language,createdAt,updatedAt,lastMessageAt,messageCount,messages',
    );
    const [header, ...rows] = csvRows(response.text);
    expect(header).toHaveLength(16);
    expect(rows.map((row) => row[0])).toEqual([second.id, first.id]);
    const row = rows[1] ?? [];
    expect(row[1]).toBe('Late parcel');
    expect(row[14]).toBe('3');
    expect(row[15]?.split('\n')).toEqual([
      expect.stringMatching(/^\[[^\]]+\] visitor: Where is it\?$/),
      `[${greeting.createdAt}] visitor: Hello, "quoted", with, commas`,
      `[${answer.createdAt}] operator one (operator): It ships today.`,
      'Second line',
    ]);
    expect(rows[0]?.[9]).toBe('billing');
  });

  it('answers 403 to a key without export:read, and never shows another organization', async () => {
    const limited = await createApiKey(tenant.orgId, ['conversations:read']);
    const refused = await call('GET', '/api/export/conversations', { token: limited.key });
    expect(refused.status).toBe(403);
    const other = await createTenant();
    const theirs = await call<Exported[]>('GET', '/api/export/conversations', { token: other.apiKey });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual([]);
  });

  it('bounds the window by date_from and date_to (lastMessageAt), and refuses a reversed one', async () => {
    const all = await call<Exported[]>('GET', '/api/export/conversations', { token: tenant.apiKey });
    const secondAt = String(all.body[0]?.lastMessageAt);
    const onlySecond = await call<Exported[]>(
      'GET',
      `/api/export/conversations?date_from=${encodeURIComponent(secondAt)}`,
      { token: tenant.apiKey },
    );
    expect(onlySecond.body.map((row) => row.id)).toEqual([second.id]);
    const untilFirst = await call<Exported[]>(
      'GET',
      `/api/export/conversations?date_to=${encodeURIComponent(String(all.body[1]?.lastMessageAt))}`,
      { token: tenant.apiKey },
    );
    expect(untilFirst.body.map((row) => row.id)).toEqual([first.id]);
    const reversed = await call<{ error: { details: Json } }>(
      'GET',
      '/api/export/conversations?date_from=2026-02-01T00:00:00.000Z&date_to=2026-01-01T00:00:00.000Z',
      { token: tenant.apiKey },
    );
    expect(reversed.status).toBe(422);
    expect(reversed.body.error.details.field).toBe('date_to');
  });

  it('audits each export after streaming: who, filters, rows, bytes, completed', async () => {
    const response = await call('GET', '/api/export/conversations?format=csv&redact_pii=true', {
      token: tenant.operatorSession,
    });
    expect(response.status).toBe(200);
    const csvEntry = (entry: Json) => {
      const details = entry.details as Json;
      return details.format === 'csv' && details.redactPii === true;
    };
    const entries = await eventually(
      async () =>
        (
          await call<{ data: Json[] }>('GET', '/api/audit-events?type=export.streamed', {
            token: tenant.apiKey,
          })
        ).body.data,
      (found) => found.some(csvEntry),
    );
    expect(entries.find(csvEntry)).toMatchObject({
      type: 'export.streamed',
      actor: { type: 'operator', id: tenant.operatorId },
      details: {
        operation: 'exportConversations',
        rows: 2,
        bytes: Buffer.byteLength(response.text),
        completed: true,
        matched: 2,
      },
    });
  });
});

describe('the row limit', () => {
  it('exports exactly the limit, and answers 422 row_limit_exceeded before any byte one over it', async () => {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey);
    for (let i = 0; i < ROW_LIMIT; i++) await conversation(tenant, visitor.visitor.id, { title: `c${i}` });
    const atLimit = await exported(
      () => call<Exported[]>('GET', '/api/export/conversations', { token: tenant.apiKey }),
      ({ status, body }) => status === 200 && body.length === ROW_LIMIT,
    );
    expect(atLimit.status).toBe(200);
    expect(atLimit.body).toHaveLength(ROW_LIMIT);
    const bulkAtLimit = await call('POST', '/api/export/conversations/bulk', { token: tenant.apiKey });
    expect(bulkAtLimit.status).toBe(200);

    await conversation(tenant, visitor.visitor.id, { title: 'one too many' });
    for (const [method, path] of [
      ['GET', '/api/export/conversations?format=csv'],
      ['POST', '/api/export/conversations/bulk'],
    ] as const) {
      const over = await exported(
        () => call<{ error: { code: string; details: Json } }>(method, path, { token: tenant.apiKey }),
        ({ status }) => status === 422,
      );
      expect(over.status, path).toBe(422);
      expect(over.headers.get('content-disposition')).toBeNull();
      expect(over.headers.get('content-type')).toMatch(/^application\/json/);
      expect(over.body.error.code).toBe('VALIDATION_ERROR');
      expect(over.body.error.details).toMatchObject({ reason: 'row_limit_exceeded', limit: ROW_LIMIT });
    }
    // A filter that brings it back under the limit exports again.
    const filtered = await call('POST', '/api/export/conversations/bulk?status=open&tags=none', {
      token: tenant.apiKey,
    });
    expect(filtered.status).toBe(200);
  });
});

describe('POST /api/export/conversations/bulk', () => {
  let tenant: Tenant;
  let assigned: { id: string };
  let tagged: { id: string };
  let closed: { id: string };

  beforeAll(async () => {
    tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey, { identifier: 'ada@example.com' });
    assigned = await conversation(tenant, visitor.visitor.id, { title: 'Assigned', message: 'hi' });
    const patched = await call('PATCH', `/api/conversations/${assigned.id}`, {
      token: tenant.apiKey,
      body: { operatorId: tenant.operatorId },
    });
    expect(patched.status, patched.text).toBe(200);
    tagged = await conversation(tenant, visitor.visitor.id, { title: 'Tagged', tags: ['vip', 'billing'] });
    closed = await conversation(tenant, visitor.visitor.id, { title: 'Closed', tags: ['vip'] });
    await call('PATCH', `/api/conversations/${closed.id}`, {
      token: tenant.apiKey,
      body: { status: 'closed' },
    });
  });

  /** The ids a filtered export lists, once it lists `wanted` (or 3 s passed). */
  const ids = async (query: string, wanted: readonly string[]) => {
    const response = await exported(
      () => call('POST', `/api/export/conversations/bulk${query}`, { token: tenant.apiKey }),
      ({ status, text }) => status === 200 && sameIds(csvIds(text), wanted),
    );
    expect(response.status, response.text).toBe(200);
    return csvIds(response.text);
  };

  it('is CSV by default, with operator names', async () => {
    const assignedRow = (text: string) => csvRows(text).find((candidate) => candidate[0] === assigned.id);
    const response = await exported(
      () => call('POST', '/api/export/conversations/bulk', { token: tenant.adminSession }),
      ({ status, text }) => status === 200 && assignedRow(text)?.[7] === tenant.operatorId,
    );
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    const row = assignedRow(response.text);
    expect(row?.[7]).toBe(tenant.operatorId);
    expect(row?.[8]).toBe('operator one');
    expect(row?.[6]).toBe('ada@example.com');
  });

  it('filters by status, operatorId, tags (all of them) and dates', async () => {
    expect(await ids('?status=closed', [closed.id])).toEqual([closed.id]);
    expect(await ids(`?operatorId=${tenant.operatorId}`, [assigned.id])).toEqual([assigned.id]);
    expect(await ids(`?operatorId=${tenant.operatorId}&status=closed`, [])).toEqual([]);
    expect((await ids('?tags=vip', [tagged.id, closed.id])).sort()).toEqual([tagged.id, closed.id].sort());
    expect(await ids('?tags=vip,billing', [tagged.id])).toEqual([tagged.id]);
    expect(await ids('?status=open&tags=vip', [tagged.id])).toEqual([tagged.id]);
    expect(await ids('?dateTo=2020-01-01T00:00:00.000Z', [])).toEqual([]);
    const all = [assigned.id, tagged.id, closed.id];
    expect((await ids('?dateFrom=2020-01-01T00:00:00.000Z', all)).length).toBe(3);
  });

  it('answers JSON with format=json, and 422 for an unknown filter or value', async () => {
    const json = await exported(
      () =>
        call<Exported[]>('POST', '/api/export/conversations/bulk?format=json&status=closed', {
          token: tenant.apiKey,
        }),
      ({ status, body }) => status === 200 && sameIds(jsonIds(body), [closed.id]),
    );
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.body.map((row) => row.id)).toEqual([closed.id]);
    for (const query of ['?status=archived', '?colour=red', '?operatorId=nope', '?redact_pii=yes']) {
      const refused = await call('POST', `/api/export/conversations/bulk${query}`, { token: tenant.apiKey });
      expect(refused.status, query).toBe(422);
    }
  });

  it('needs export:write', async () => {
    const reader = await createApiKey(tenant.orgId, ['export:read']);
    expect((await call('POST', '/api/export/conversations/bulk', { token: reader.key })).status).toBe(403);
    const writer = await createApiKey(tenant.orgId, ['export:write']);
    expect((await call('POST', '/api/export/conversations/bulk', { token: writer.key })).status).toBe(200);
  });
});

describe('redact_pii and spreadsheet safety', () => {
  let tenant: Tenant;
  let conversationId: string;
  const text = [
    'Mail me at jane.doe+orders@example.co.uk or JOHN@MAIL.EXAMPLE.COM.',
    'Call +44 20 7946 0958, (202) 555-0143, 202.555.0143, 2025550143 or +1-202-555-0143.',
    'Order 123456789 of 2026-11-21 cost $1,234.56, ref 0192f3a4-5b6c-7d8e-9f00-112233445566.',
  ].join('\n');

  beforeAll(async () => {
    tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey, { identifier: '=cmd|calc' });
    const created = await conversation(tenant, visitor.visitor.id, {
      title: '=HYPERLINK("http://evil.example","click")',
      tags: ['+SUM(1)', '@attack', '-2+3'],
      message: text,
    });
    conversationId = created.id;
    await say(tenant, conversationId, '=1+1 typed by an operator');
  });

  it('masks e-mail addresses and phone numbers in message text and keeps the rest', async () => {
    const response = await exported(
      () => call<Exported[]>('GET', '/api/export/conversations?redact_pii=true', { token: tenant.apiKey }),
      ({ status, body }) => status === 200 && sameIds(jsonIds(body), [conversationId]),
    );
    const messages = response.body[0]?.messages ?? [];
    expect(messages[0]?.content).toBe(
      [
        'Mail me at [email redacted] or [email redacted].',
        'Call [phone redacted], [phone redacted], [phone redacted], [phone redacted] or [phone redacted].',
        'Order 123456789 of 2026-11-21 cost $1,234.56, ref 0192f3a4-5b6c-7d8e-9f00-112233445566.',
      ].join('\n'),
    );
    // The preview is message text too.
    const preview = (response.body[0]?.lastMessage as { content: string } | null)?.content;
    expect(preview).toBe('=1+1 typed by an operator');
    const plain = await call<Exported[]>('GET', '/api/export/conversations', { token: tenant.apiKey });
    expect(plain.body[0]?.messages[0]?.content).toBe(text);
    const csv = await call('GET', '/api/export/conversations?format=csv&redact_pii=true', {
      token: tenant.apiKey,
    });
    expect(csv.text).not.toContain('jane.doe');
    expect(csv.text).not.toContain('7946');
    expect(csv.text).toContain('123456789');
  });

  it('starts every cell a spreadsheet would read as a formula with a quote', async () => {
    const response = await exported(
      () => call('POST', '/api/export/conversations/bulk', { token: tenant.apiKey }),
      ({ status, text }) => status === 200 && sameIds(csvIds(text), [conversationId]),
    );
    const [, row] = csvRows(response.text);
    expect(row?.[1]).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(row?.[6]).toBe("'=cmd|calc");
    expect(row?.[9]).toBe("'+SUM(1);@attack;-2+3");
    // The messages cell starts with its timestamp; a formula inside a message stays inert text.
    expect(row?.[15]?.startsWith('[')).toBe(true);
    expect(row?.[15]).toContain('operator one (operator): =1+1 typed by an operator');
  });
});
