import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import {
  type ApiResponse,
  call,
  createApiKey,
  createTenant,
  createVisitor,
  type Tenant,
} from '../helpers/api';
import { eventuallyIndexed, sameIds } from '../helpers/indexed';
import { tableClient } from '../helpers/table';

type ErrorBody = {
  error: { code: string; details?: Record<string, unknown>; fields?: Record<string, string> };
};
const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

let tenant: Tenant;
let visitorId: string;

beforeAll(async () => {
  tenant = await createTenant();
  visitorId = (await createVisitor(tenant.widgetKey)).visitor.id;
});

describe('routing is decided before authentication', () => {
  it('answers an unknown path 404 and a known path with another method 405, with no credential', async () => {
    const unknown = await call('GET', '/api/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).code).toBe('NOT_FOUND');
    const wrongMethod = await call('PUT', '/api/conversations');
    expect(wrongMethod.status).toBe(405);
    expect(errorOf(wrongMethod).code).toBe('METHOD_NOT_ALLOWED');
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
  });

  it('answers a CORS preflight on a known path with its methods, and lets any origin read answers', async () => {
    const preflight = await call('OPTIONS', '/api/conversations', {
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Widget-Key');
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect((await call('OPTIONS', '/api/nothing-here')).status).toBe(404);
    const answer = await call('GET', '/api/me', {
      token: tenant.apiKey,
      headers: { Origin: 'https://shop.example' },
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
  });

  it('treats a path id that is not a UUID as missing', async () => {
    const response = await call('GET', '/api/conversations/not-a-uuid', { token: tenant.apiKey });
    expect(response.status).toBe(404);
  });
});

describe('request bodies', () => {
  it('refuse malformed JSON (400), other media types (415) and bodies over 256 KiB (413)', async () => {
    const malformed = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      rawBody: '{"visitorId": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(errorOf(malformed).code).toBe('BAD_REQUEST');
    const form = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      rawBody: 'visitorId=1',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    const huge = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, message: 'x'.repeat(256 * 1024) },
    });
    expect(huge.status).toBe(413);
    expect(errorOf(huge).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('reject unknown fields (422 naming the first) and list every invalid field', async () => {
    const response = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, organizationId: tenant.orgId, priority: 'whenever', tags: ['ok', ''] },
    });
    expect(response.status).toBe(422);
    const error = errorOf(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details?.field).toBe('organizationId');
    expect(Object.keys(error.fields ?? {})).toEqual(
      expect.arrayContaining(['organizationId', 'priority', 'tags.1']),
    );
  });

  it('sanitizes the first message to text', async () => {
    const created = await call<{ id: string; lastMessage: { content: string } }>(
      'POST',
      '/api/conversations',
      {
        token: tenant.apiKey,
        body: { visitorId, message: 'Hi <img src=x onerror=alert(1)><script>steal()</script><b>there</b>' },
      },
    );
    expect(created.status).toBe(201);
    expect(created.body.lastMessage.content).toBe('Hi there');
    const empty = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, message: '<script>x</script>' },
    });
    expect(errorOf(empty).details?.field).toBe('message');
  });
});

describe('tenancy', () => {
  it('makes another organization’s ids behave as missing', async () => {
    const other = await createTenant();
    const theirs = await call<{ id: string }>('POST', '/api/conversations', {
      token: other.apiKey,
      body: { visitorId: (await createVisitor(other.widgetKey)).visitor.id },
    });
    const read = await call('GET', `/api/conversations/${theirs.body.id}`, { token: tenant.apiKey });
    expect(read.status).toBe(404);
    const byOperatorSession = await call('GET', `/api/conversations/${theirs.body.id}`, {
      token: tenant.adminSession,
    });
    expect(byOperatorSession.status).toBe(404);
    const foreignVisitor = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId: (await createVisitor(other.widgetKey)).visitor.id },
    });
    expect(foreignVisitor.status).toBe(422);
    expect(errorOf(foreignVisitor).details?.field).toBe('visitorId');
    const mine = await call<{ data: { id: string }[] }>('GET', '/api/conversations?limit=100', {
      token: tenant.apiKey,
    });
    expect(mine.body.data.map((c) => c.id)).not.toContain(theirs.body.id);
  });
});

describe('listing conversations', () => {
  it('pages newest first with opaque cursors, and filters', async () => {
    const own = await createTenant();
    const visitor = (await createVisitor(own.widgetKey)).visitor.id;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await call<{ id: string }>('POST', '/api/conversations', {
        token: own.apiKey,
        body: { visitorId: visitor, priority: i % 2 ? 'high' : 'low', tags: i === 4 ? ['vip'] : [] },
      });
      ids.push(created.body.id);
    }
    const pageThrough = async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const page: ApiResponse<{ data: { id: string }[]; nextCursor: string | null }> = await call(
          'GET',
          `/api/conversations${query}`,
          {
            token: own.apiKey,
          },
        );
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data.map((c) => c.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      return seen;
    };
    // Listings read an index, which may show the new conversations up to 2 s later: the whole
    // walk through the cursors is read again until it shows them.
    const seen = await eventuallyIndexed(pageThrough, (found) => sameIds(found, [...ids].reverse()));
    expect(seen).toEqual([...ids].reverse());

    const high = await eventuallyIndexed(
      () =>
        call<{ data: { id: string }[] }>('GET', '/api/conversations?priority=high', { token: own.apiKey }),
      (answer) =>
        sameIds(
          answer.body.data.map((c) => c.id),
          [ids[3], ids[1]],
        ),
    );
    expect(high.body.data.map((c) => c.id)).toEqual([ids[3], ids[1]]);
    const vip = await eventuallyIndexed(
      () =>
        call<{ data: { id: string }[] }>('GET', '/api/conversations?tag=vip&status=open', {
          token: own.apiKey,
        }),
      (answer) =>
        sameIds(
          answer.body.data.map((c) => c.id),
          [ids[4]],
        ),
    );
    expect(vip.body.data.map((c) => c.id)).toEqual([ids[4]]);
    const closed = await call<{ data: unknown[] }>('GET', '/api/conversations?status=closed', {
      token: own.apiKey,
    });
    expect(closed.body.data).toEqual([]);
  });

  it('lists an operator’s own conversations by operatorId', async () => {
    const own = await createTenant();
    const visitor = (await createVisitor(own.widgetKey)).visitor.id;
    const assigned = await call<{ id: string; operatorId: string }>('POST', '/api/conversations', {
      token: own.operatorSession,
      body: { visitorId: visitor, message: 'We noticed you were looking at pricing' },
    });
    expect(assigned.body.operatorId).toBe(own.operatorId);
    await call('POST', '/api/conversations', { token: own.apiKey, body: { visitorId: visitor } });
    // The listing by operator reads an index: it may show the conversation up to 2 s later.
    const mine = await eventuallyIndexed(
      () =>
        call<{ data: { id: string }[] }>('GET', `/api/conversations?operatorId=${own.operatorId}`, {
          token: own.apiKey,
        }),
      (answer) => answer.body.data.length > 0,
    );
    expect(mine.body.data.map((c) => c.id)).toEqual([assigned.body.id]);
  });

  it('refuses limits over 100 (422) and forged or foreign cursors (400)', async () => {
    const tooMany = await call('GET', '/api/conversations?limit=101', { token: tenant.apiKey });
    expect(tooMany.status).toBe(422);
    expect(errorOf(tooMany).details?.field).toBe('limit');
    const forged = await call('GET', '/api/conversations?cursor=eyJvIjoiYSJ9.c2lnbmF0dXJl', {
      token: tenant.apiKey,
    });
    expect(forged.status).toBe(400);
    expect(errorOf(forged).code).toBe('BAD_REQUEST');

    const other = await createTenant();
    const otherVisitor = (await createVisitor(other.widgetKey)).visitor.id;
    for (let i = 0; i < 2; i++)
      await call('POST', '/api/conversations', { token: other.apiKey, body: { visitorId: otherVisitor } });
    // A cursor of a listing: its index may show the two conversations up to 2 s later.
    const page = await eventuallyIndexed(
      () => call<{ nextCursor: string }>('GET', '/api/conversations?limit=1', { token: other.apiKey }),
      (answer) => Boolean(answer.body.nextCursor),
    );
    expect(page.body.nextCursor).toBeTruthy();
    const foreign = await call(
      'GET',
      `/api/conversations?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`,
      { token: tenant.apiKey },
    );
    expect(foreign.status).toBe(400);
    const otherFilter = await call(
      'GET',
      `/api/conversations?limit=1&status=open&cursor=${encodeURIComponent(page.body.nextCursor)}`,
      {
        token: other.apiKey,
      },
    );
    expect(otherFilter.status).toBe(400);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response and refuses the same key with another body', async () => {
    const key = crypto.randomUUID();
    const body = { visitorId, title: 'Refund request' };
    const first = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body,
      headers: { 'Idempotency-Key': key },
    });
    const again = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const changed = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { ...body, title: 'Another' },
      headers: { 'Idempotency-Key': key },
    });
    expect(changed.status).toBe(409);
    expect(errorOf(changed).code).toBe('CONFLICT');
  });

  it('runs a request again after it failed', async () => {
    const key = crypto.randomUUID();
    const bad = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { title: 'no visitor' },
      headers: { 'Idempotency-Key': key },
    });
    expect(bad.status).toBe(422);
    const retried = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { title: 'no visitor' },
      headers: { 'Idempotency-Key': key },
    });
    expect(retried.status).toBe(422);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After once a credential spends its minute', async () => {
    const limit = inject('rateLimitPerMinute');
    const secondsLeftInMinute = 60 - ((Date.now() / 1000) % 60);
    // Do not straddle a window boundary: start in a fresh minute if this one is nearly over.
    if (secondsLeftInMinute < 5)
      await new Promise((resolve) => setTimeout(resolve, secondsLeftInMinute * 1000 + 200));
    const key = await createApiKey(tenant.orgId, []);
    // The minute's first requests, already counted in the credential's window (what the function
    // instances leased for them): the last `left` are sent here, and exactly those are admitted.
    const left = 60;
    const windowStartMs = Date.now() - (Date.now() % 60_000);
    await tableClient().send(
      new PutCommand({
        TableName: inject('tableName'),
        Item: {
          ...keys.rateWindow(tenant.orgId, key.id, windowStartMs),
          used: limit - left,
          expiresAt: Math.ceil(windowStartMs / 1000) + 120,
        },
      }),
    );
    let last: ApiResponse<unknown> | undefined;
    let admitted = 0;
    for (let sent = 0; sent < left + 10; sent += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, () => call('GET', '/api/me', { token: key.key })),
      );
      admitted += batch.filter((response) => response.status === 200).length;
      last = batch.find((response) => response.status === 429) ?? last;
    }
    expect(admitted).toBe(left);
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last?.headers.get('ratelimit-remaining')).toBe('0');
    expect(last?.headers.get('ratelimit-limit')).toBe(String(limit));
    // Another credential of the same organization is not affected.
    expect((await call('GET', '/api/me', { token: tenant.apiKey })).status).toBe(200);
  });
});
