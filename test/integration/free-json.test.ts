import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/routes';
import { type ApiResponse, call, createTenant, createVisitor, type Tenant } from '../helpers/api';

type ErrorBody = { error: { code: string; details?: { field?: string } } };
const fieldOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error.details?.field;

/** `{ "k": { "k": … 1 } }`: an object `levels` deep. */
const nested = (levels: number): Record<string, unknown> => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { k: value };
  return value as Record<string, unknown>;
};
/** `levels` opening brackets and their closing ones, as text (JSON.stringify would recurse). */
const deepText = (levels: number) => `{"metadata":${'['.repeat(levels)}${']'.repeat(levels)}}`;

let tenant: Tenant;
let visitorId: string;

beforeAll(async () => {
  tenant = await createTenant();
  visitorId = (await createVisitor(tenant.widgetKey)).visitor.id;
});

describe('free-form JSON values are bounded: 8 levels and 16 KiB per field', () => {
  it('accepts metadata 8 levels deep and refuses 9 or 30 levels (422 naming the field), on create and PATCH', async () => {
    const created = await call<{ id: string; metadata: unknown }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, metadata: nested(8) },
    });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual(nested(8));
    for (const levels of [9, 30]) {
      const refused = await call('POST', '/api/conversations', {
        token: tenant.apiKey,
        body: { visitorId, metadata: nested(levels) },
      });
      expect(refused.status, `${levels} levels`).toBe(422);
      expect(fieldOf(refused)).toBe('metadata');
      const patched = await call('PATCH', `/api/conversations/${created.body.id}`, {
        token: tenant.apiKey,
        body: { metadata: nested(levels) },
      });
      expect(patched.status, `${levels} levels`).toBe(422);
      expect(fieldOf(patched)).toBe('metadata');
    }
  });

  it('refuses metadata over 16 KiB, and a PATCH whose merged metadata would pass 16 KiB', async () => {
    const tooLarge = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, metadata: { note: 'x'.repeat(16 * 1024) } },
    });
    expect(tooLarge.status).toBe(422);
    expect(fieldOf(tooLarge)).toBe('metadata');

    const half = 'y'.repeat(9 * 1024);
    const created = await call<{ id: string; version: number }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, metadata: { a: half } },
    });
    expect(created.status).toBe(201);
    const merged = await call('PATCH', `/api/conversations/${created.body.id}`, {
      token: tenant.apiKey,
      body: { metadata: { b: half } },
    });
    expect(merged.status).toBe(422);
    expect(fieldOf(merged)).toBe('metadata');
    // Replacing the large key instead keeps the merged value within bounds.
    const replaced = await call<{ metadata: Record<string, unknown> }>(
      'PATCH',
      `/api/conversations/${created.body.id}`,
      { token: tenant.apiKey, body: { metadata: { a: null, b: half } } },
    );
    expect(replaced.status).toBe(200);
    expect(Object.keys(replaced.body.metadata)).toEqual(['b']);
  });

  it('bounds custom-field values at 16 KiB', async () => {
    const refused = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId, customFields: { notes: 'z'.repeat(16 * 1024 + 1) } },
    });
    expect(refused.status).toBe(422);
    expect(fieldOf(refused)).toBe('customFields.notes');
  });

  it('refuses a deep visitor through the widget, and a visitor at the bound can open conversations', async () => {
    const poisoned = await call('POST', '/api/widget/visitors', {
      headers: { 'X-Widget-Key': tenant.widgetKey },
      body: { metadata: nested(29) },
    });
    expect(poisoned.status).toBe(422);
    expect(fieldOf(poisoned)).toBe('metadata');

    const deepest = await call<{ visitor: { id: string }; token: string }>('POST', '/api/widget/visitors', {
      headers: { 'X-Widget-Key': tenant.widgetKey },
      body: { metadata: { ...nested(8), big: 'v'.repeat(15 * 1024) } },
    });
    expect(deepest.status).toBe(201);
    // The visitor is copied into each conversation (and the conversation into its events).
    for (let i = 0; i < 2; i++) {
      const own = await call('POST', '/api/conversations', {
        token: deepest.body.token,
        body: { message: 'hello', metadata: nested(8) },
      });
      expect(own.status).toBe(201);
      const byKey = await call('POST', '/api/conversations', {
        token: tenant.apiKey,
        body: { visitorId: deepest.body.visitor.id, metadata: { ...nested(8), big: 'm'.repeat(15 * 1024) } },
      });
      expect(byKey.status).toBe(201);
    }
  });

  it('answers a body nested beyond the parser’s bound with 400 on every route that takes a body', async () => {
    const bodyRoutes = allRoutes().filter((route) => route.body);
    expect(bodyRoutes.length).toBeGreaterThan(10);
    for (const levels of [100, 10_000]) {
      for (const route of bodyRoutes) {
        const path = route.path.replace(/\{[^}]+\}/g, '00000000-0000-7000-8000-000000000000');
        const response = await call(route.method, path, {
          token: tenant.apiKey,
          rawBody: deepText(levels),
          headers: { 'Content-Type': 'application/json' },
        });
        expect(response.status, `${route.method} ${route.path} with ${levels} levels`).toBeLessThan(500);
        if (response.status !== 401 && response.status !== 403 && response.status !== 404)
          expect([400, 422]).toContain(response.status);
      }
    }
    const deep = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      rawBody: deepText(10_000),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(deep.status).toBe(400);
    expect((deep.body as ErrorBody).error.code).toBe('BAD_REQUEST');
  });
});

describe('a body must be a JSON object', () => {
  it('answers null, arrays and scalars with 422 on every route that takes a body', async () => {
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId },
    });
    for (const raw of ['null', '[]', '"x"', '5', 'true']) {
      const response = await call('PATCH', `/api/conversations/${created.body.id}`, {
        token: tenant.apiKey,
        rawBody: raw,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(response.status, raw).toBe(422);
      expect((response.body as ErrorBody).error.code).toBe('VALIDATION_ERROR');
      expect(fieldOf(response)).toBe('body');
    }
    const nullCreate = await call('POST', '/api/conversations', {
      token: tenant.apiKey,
      rawBody: 'null',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(nullCreate.status).toBe(422);
  });

  it('answers a PATCH or PUT with no body at all with 422', async () => {
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId },
    });
    for (const path of [
      `/api/conversations/${created.body.id}`,
      `/api/conversations/${created.body.id}/locale`,
    ]) {
      const response = await call('PATCH', path, { token: tenant.apiKey });
      expect(response.status, path).toBe(422);
      expect(fieldOf(response)).toBe('body');
    }
    const followUp = await call('PUT', `/api/conversations/${created.body.id}/follow-up`, {
      token: tenant.apiKey,
    });
    expect(followUp.status).toBe(422);
    expect(fieldOf(followUp)).toBe('body');
  });
});
