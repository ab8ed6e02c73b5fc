import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  createApiKey,
  createTenant,
  createVisitor,
  type Tenant,
} from '../helpers/api';
import { eventually } from '../helpers/eventually';

/**
 * Survey (CSAT) responses through the local gateway: who may answer for whom, one active response
 * per conversation and visitor (races included), soft delete and a new response, the listing, and
 * tenancy. The CSAT figures they move are read back from GET /api/analytics/csat.
 */
type Survey = {
  id: string;
  orgId: string;
  conversationId: string;
  visitorId: string;
  operatorId: string | null;
  score: number;
  comment: string | null;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  deactivatedAt: string | null;
};
type Csat = {
  averageScore: number | null;
  totalResponses: number;
  distribution: Record<string, number>;
  byOperator: { operatorId: string; averageScore: number; responses: number }[];
  daily: { date: string; averageScore: number | null; responses: number }[];
};
type ErrorBody = { error: { code: string; details?: { field?: string; surveyId?: string } } };

const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

let tenant: Tenant;
let other: Tenant;

async function visitorWithConversation(owner: Tenant = tenant, operatorId?: string) {
  const visitor = await createVisitor(owner.widgetKey);
  const conversation = await call<{ id: string }>('POST', '/api/conversations', {
    token: visitor.token,
    body: { message: 'My parcel is late' },
  });
  expect(conversation.status, conversation.text).toBe(201);
  if (operatorId) {
    const assigned = await call('PATCH', `/api/conversations/${conversation.body.id}`, {
      token: owner.apiKey,
      body: { operatorId },
    });
    expect(assigned.status, assigned.text).toBe(200);
  }
  return { visitorId: visitor.visitor.id, visitorToken: visitor.token, conversationId: conversation.body.id };
}

const answer = (body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Survey>('POST', '/api/surveys', { token, body });

/**
 * The organization's CSAT figures once `settled` holds for them, or as they stand when the wait is
 * over: the counters follow the responses from the table's stream, within moments.
 */
const csat = async (owner: Tenant = tenant, settled: (figures: Csat) => boolean = () => true) => {
  const read = async () => {
    const response = await call<Csat>('GET', '/api/analytics/csat?period=7d', { token: owner.apiKey });
    expect(response.status, response.text).toBe(200);
    return response.body;
  };
  return eventually(read, settled, { timeoutMs: 20_000, intervalMs: 200 });
};
const responses = (count: number) => (figures: Csat) => figures.totalResponses === count;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
});

describe('POST /api/surveys', () => {
  it('records a visitor’s response for their own conversation, sanitized, credited to its operator', async () => {
    const { visitorId, visitorToken, conversationId } = await visitorWithConversation(
      tenant,
      tenant.operatorId,
    );

    const created = await answer(
      { conversationId, score: 4, comment: '<script>alert(1)</script>Quick and <b>friendly</b>' },
      visitorToken,
    );

    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      orgId: tenant.orgId,
      conversationId,
      visitorId,
      operatorId: tenant.operatorId,
      score: 4,
      comment: 'Quick and friendly',
      isActive: true,
      deactivatedAt: null,
    });
    // Not a change of the conversation: its version stays.
    const conversation = await call<{ version: number }>('GET', `/api/conversations/${conversationId}`, {
      token: tenant.apiKey,
    });
    expect(conversation.body.version).toBe(2);
  });

  it('lets keys and operators answer only for the conversation’s visitor (422 visitorId otherwise)', async () => {
    const { visitorId, conversationId } = await visitorWithConversation();
    const stranger = await createVisitor(tenant.widgetKey);

    const missing = await answer({ conversationId, score: 5 });
    const wrong = await answer({ conversationId, score: 5, visitorId: stranger.visitor.id });
    const visitorNamingOther = await answer({ conversationId, score: 5, visitorId }, stranger.token);
    const byOperator = await answer({ conversationId, score: 5, visitorId }, tenant.operatorSession);

    expect(missing.status).toBe(422);
    expect(errorOf(missing).details?.field).toBe('visitorId');
    expect(wrong.status).toBe(422);
    expect(errorOf(wrong).details?.field).toBe('visitorId');
    expect(visitorNamingOther.status).toBe(422);
    expect(errorOf(visitorNamingOther).details?.field).toBe('visitorId');
    expect(byOperator.status, byOperator.text).toBe(201);
    expect(byOperator.body.visitorId).toBe(visitorId);
  });

  it('refuses a conversation it cannot see (422 conversationId) and a score outside 1..5', async () => {
    const mine = await visitorWithConversation();
    const theirs = await visitorWithConversation(other);
    const stranger = await createVisitor(tenant.widgetKey);

    const foreign = await answer({
      conversationId: theirs.conversationId,
      visitorId: theirs.visitorId,
      score: 3,
    });
    const notTheirs = await answer({ conversationId: mine.conversationId, score: 3 }, stranger.token);
    const unknown = await answer({
      conversationId: crypto.randomUUID(),
      visitorId: mine.visitorId,
      score: 3,
    });
    const scores = await Promise.all(
      [0, 6, 4.5, '5'].map((score) =>
        answer({ conversationId: mine.conversationId, score }, mine.visitorToken),
      ),
    );
    const extra = await answer(
      { conversationId: mine.conversationId, score: 3, rating: 3 },
      mine.visitorToken,
    );

    for (const response of [foreign, notTheirs, unknown]) {
      expect(response.status, response.text).toBe(422);
      expect(errorOf(response).details?.field).toBe('conversationId');
    }
    for (const response of scores) {
      expect(response.status, response.text).toBe(422);
      expect(errorOf(response).details?.field).toBe('score');
    }
    expect(extra.status).toBe(422);
    // Nothing was recorded by any of them.
    const listed = await call<{ data: Survey[] }>(
      'GET',
      `/api/surveys?conversationId=${mine.conversationId}`,
      {
        token: tenant.apiKey,
      },
    );
    expect(listed.body.data).toEqual([]);
  });

  it('keeps one active response per conversation and visitor, also when requests race', async () => {
    const { visitorId, visitorToken, conversationId } = await visitorWithConversation();

    const racing = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => answer({ conversationId, score: 1 + i }, visitorToken)),
      ...Array.from({ length: 4 }, (_, i) => answer({ conversationId, visitorId, score: 2 + i })),
    ]);

    const statuses = racing.map((response) => response.status).sort();
    expect(statuses, racing.map((response) => response.text).join('\n')).toEqual([
      201, 409, 409, 409, 409, 409, 409, 409,
    ]);
    const winner = racing.find((response) => response.status === 201)?.body;
    const loser = racing.find((response) => response.status === 409);
    expect(loser && errorOf(loser)).toMatchObject({ code: 'CONFLICT', details: { surveyId: winner?.id } });
    const listed = await call<{ data: Survey[] }>('GET', `/api/surveys?conversationId=${conversationId}`, {
      token: tenant.apiKey,
    });
    expect(listed.body.data.map((survey) => survey.id)).toEqual([winner?.id]);
  });
});

describe('DELETE /api/surveys/{id}', () => {
  it('soft-deletes (repeatable), after which a new active response may be recorded and counts alone', async () => {
    const owner = await createTenant();
    const { visitorToken, conversationId } = await visitorWithConversation(owner, owner.operatorId);
    const first = await answer({ conversationId, score: 1 }, visitorToken);
    expect(first.status, first.text).toBe(201);
    expect((await csat(owner, responses(1))).totalResponses).toBe(1);

    const deleted = await call('DELETE', `/api/surveys/${first.body.id}`, { token: owner.apiKey });
    const again = await call('DELETE', `/api/surveys/${first.body.id}`, { token: owner.operatorSession });
    const afterDelete = await csat(owner, responses(0));
    const second = await answer({ conversationId, score: 5 }, visitorToken);

    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true });
    expect(afterDelete).toMatchObject({ totalResponses: 0, averageScore: null, byOperator: [] });
    expect(second.status, second.text).toBe(201);
    const listed = await call<{ data: Survey[]; pagination: { totalItems: number } }>(
      'GET',
      `/api/surveys?conversationId=${conversationId}`,
      { token: owner.apiKey },
    );
    expect(listed.body.pagination.totalItems).toBe(2);
    expect(listed.body.data.map((survey) => [survey.id, survey.isActive])).toEqual([
      [second.body.id, true],
      [first.body.id, false],
    ]);
    expect(listed.body.data[1]?.deactivatedAt).not.toBeNull();
    const figures = await csat(
      owner,
      (settled) => settled.totalResponses === 1 && settled.averageScore === 5,
    );
    expect(figures).toMatchObject({
      totalResponses: 1,
      averageScore: 5,
      distribution: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 1 },
      byOperator: [{ operatorId: owner.operatorId, averageScore: 5, responses: 1 }],
    });
    expect(figures.daily.at(-1)).toMatchObject({ responses: 1, averageScore: 5 });
  });

  it('is 404 for an unknown id, another organization’s response, and another visitor’s', async () => {
    const { visitorToken, conversationId } = await visitorWithConversation();
    const mine = await answer({ conversationId, score: 3 }, visitorToken);
    const stranger = await createVisitor(tenant.widgetKey);

    const unknown = await call('DELETE', `/api/surveys/${crypto.randomUUID()}`, { token: tenant.apiKey });
    const foreign = await call('DELETE', `/api/surveys/${mine.body.id}`, { token: other.apiKey });
    const notTheirs = await call('DELETE', `/api/surveys/${mine.body.id}`, { token: stranger.token });
    const malformed = await call('DELETE', '/api/surveys/not-a-uuid', { token: tenant.apiKey });
    const own = await call('DELETE', `/api/surveys/${mine.body.id}`, { token: visitorToken });

    for (const response of [unknown, foreign, notTheirs, malformed]) expect(response.status).toBe(404);
    expect(own.status, own.text).toBe(200);
  });

  it('needs surveys:write; the listing and CSAT need surveys:read', async () => {
    const { visitorToken, conversationId } = await visitorWithConversation();
    const survey = await answer({ conversationId, score: 2 }, visitorToken);
    const reader = await createApiKey(tenant.orgId, ['surveys:read']);

    const denied = await call('DELETE', `/api/surveys/${survey.body.id}`, { token: reader.key });
    const listed = await call('GET', `/api/surveys?conversationId=${conversationId}`, { token: reader.key });
    const figures = await call('GET', '/api/analytics/csat', { token: reader.key });
    const writer = await createApiKey(tenant.orgId, ['surveys:write']);
    const noRead = await call('GET', '/api/analytics/csat', { token: writer.key });

    expect(denied.status).toBe(403);
    expect(listed.status).toBe(200);
    expect(figures.status).toBe(200);
    expect(noRead.status).toBe(403);
  });
});

describe('GET /api/surveys', () => {
  it('needs conversationId, pages newest first, and hides other organizations’ and deleted conversations', async () => {
    const { visitorToken, visitorId, conversationId } = await visitorWithConversation();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await answer({ conversationId, visitorId, score: 3 + (i % 2) });
      ids.unshift(created.body.id);
      if (i < 2) await call('DELETE', `/api/surveys/${created.body.id}`, { token: visitorToken });
    }

    const missing = await call('GET', '/api/surveys', { token: tenant.apiKey });
    const page = await call<{ data: Survey[]; pagination: Record<string, unknown> }>(
      'GET',
      `/api/surveys?conversationId=${conversationId}&offset=1&limit=1`,
      { token: tenant.apiKey },
    );
    const foreign = await call('GET', `/api/surveys?conversationId=${conversationId}`, {
      token: other.apiKey,
    });
    await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: [conversationId] },
    });
    const deleted = await call('GET', `/api/surveys?conversationId=${conversationId}`, {
      token: tenant.apiKey,
    });

    expect(missing.status).toBe(422);
    expect(errorOf(missing).details?.field).toBe('conversationId');
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.map((survey) => survey.id)).toEqual([ids[1]]);
    expect(page.body.pagination).toEqual({
      totalItems: 3,
      page: 2,
      pageSize: 1,
      hasNextPage: true,
      hasPrevPage: true,
    });
    expect(foreign.status).toBe(404);
    expect(deleted.status).toBe(404);
  });
});

describe('CSAT counters', () => {
  it('count active responses only: a deleted response and a deleted conversation’s response drop out', async () => {
    const owner = await createTenant();
    const a = await visitorWithConversation(owner, owner.operatorId);
    const b = await visitorWithConversation(owner, owner.adminOperatorId);
    const c = await visitorWithConversation(owner);
    const d = await visitorWithConversation(owner, owner.operatorId);
    await answer({ conversationId: a.conversationId, score: 5 }, a.visitorToken);
    await answer({ conversationId: b.conversationId, score: 2 }, b.visitorToken);
    await answer({ conversationId: c.conversationId, score: 4 }, c.visitorToken);
    const doomed = await answer({ conversationId: d.conversationId, score: 1 }, d.visitorToken);
    expect((await csat(owner, responses(4))).totalResponses).toBe(4);

    // A response deleted, then its conversation deleted: nothing is subtracted twice.
    await call('DELETE', `/api/surveys/${doomed.body.id}`, { token: owner.apiKey });
    const bulk = await call('POST', '/api/conversations/bulk-delete', {
      token: owner.apiKey,
      body: { conversationIds: [b.conversationId, d.conversationId] },
    });
    expect(bulk.status, bulk.text).toBe(200);
    // Its conversation is gone, the record stays: deleting it still succeeds and changes no figure.
    const late = await call('DELETE', `/api/surveys/${doomed.body.id}`, { token: owner.apiKey });
    // The stream's consumer counts the day and each operator's day as separate items: a moment may
    // show one moved and not yet the other.
    const figures = await csat(
      owner,
      (settled) =>
        settled.totalResponses === 2 && settled.averageScore === 4.5 && settled.byOperator.length === 1,
    );

    expect(late.status).toBe(200);
    expect(figures).toMatchObject({
      totalResponses: 2,
      averageScore: 4.5,
      distribution: { '1': 0, '2': 0, '3': 0, '4': 1, '5': 1 },
      // The unassigned conversation's response counts in the totals only.
      byOperator: [{ operatorId: owner.operatorId, averageScore: 5, responses: 1 }],
    });
    expect((await csat(await createTenant())).totalResponses).toBe(0);
  });

  it('a response of a conversation deleted while it was active is removed by the deletion itself', async () => {
    const owner = await createTenant();
    const a = await visitorWithConversation(owner, owner.operatorId);
    const survey = await answer({ conversationId: a.conversationId, score: 3 }, a.visitorToken);
    expect((await csat(owner, responses(1))).totalResponses).toBe(1);
    await call('POST', '/api/conversations/bulk-delete', {
      token: owner.apiKey,
      body: { conversationIds: [a.conversationId] },
    });
    const afterDeletion = await csat(owner, responses(0));
    const deleted = await call('DELETE', `/api/surveys/${survey.body.id}`, { token: owner.apiKey });
    const afterSurveyDelete = await csat(owner, responses(0));

    expect(afterDeletion).toMatchObject({ totalResponses: 0, byOperator: [] });
    expect(deleted.status).toBe(200);
    expect(afterSurveyDelete.totalResponses).toBe(0);
    expect(afterSurveyDelete.daily.every((day) => day.responses === 0)).toBe(true);
  });
});
