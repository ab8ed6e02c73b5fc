import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { seedMessages } from '../helpers/table';

/**
 * Transcripts of one conversation: CSV at once (chronological, capped at 5,000 messages), PDF by
 * job (SQS → worker → S3, a download URL that needs no credential), by e-mail through the SES
 * emulator (escaped HTML, no internal notes, a per-organization limit), and their tenancy.
 */
type Json = Record<string, unknown>;

interface StoredMail {
  destination: { to: string[] };
  subject: string;
  body: { html?: string; text?: string };
}

async function mailTo(address: string): Promise<StoredMail | undefined> {
  const found = await eventually(
    async () => {
      const response = await fetch(`${inject('endpoints').ses}/store`);
      const store = (await response.json()) as { emails: StoredMail[] };
      return store.emails.find((mail) => mail.destination.to.some((to) => to.includes(address)));
    },
    (mail) => mail !== undefined,
    { timeoutMs: 5_000 },
  );
  return found;
}

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };
let conversationId: string;
let messages: { id: string; createdAt: string; content: string }[];

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
  const created = await call<{ id: string }>('POST', '/api/conversations', {
    token: visitor.token,
    body: {
      title: 'Broken <b>parcel</b> & "box"',
      message: 'Parcel 5 < 6 & "late" <b>bold</b> <script>alert(1)</script>',
    },
  });
  conversationId = created.body.id;
  await call('POST', `/api/conversations/${conversationId}/messages`, {
    token: tenant.operatorSession,
    body: { content: '=1+1 sorry about that, a new one ships today' },
  });
  await call('POST', `/api/conversations/${conversationId}/messages`, {
    token: visitor.token,
    body: { content: 'Thanks!\nSee you' },
  });
  const note = await call('POST', `/api/conversations/${conversationId}/notes`, {
    token: tenant.operatorSession,
    body: { content: 'INTERNAL-NOTE-secret refund approved' },
  });
  expect(note.status).toBe(201);
  const listed = await call<{ data: { id: string; createdAt: string; content: string }[] }>(
    'GET',
    `/api/conversations/${conversationId}/messages`,
    { token: tenant.apiKey },
  );
  messages = [...listed.body.data].reverse();
});

describe('GET /api/conversations/{id}/transcript (CSV)', () => {
  it('answers the CSV at once: one row, the transcript oldest first in one cell', async () => {
    const response = await call('GET', `/api/conversations/${conversationId}/transcript`, {
      token: tenant.apiKey,
    });
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="transcript-${conversationId}.csv"`,
    );
    const rows = parse(response.text) as string[][];
    expect(rows).toEqual([
      ['conversationId', 'title', 'createdAt', 'transcript', 'messageCount', 'truncated'],
      [
        conversationId,
        'Broken <b>parcel</b> & "box"',
        expect.any(String),
        [
          `[${messages[0]?.createdAt}] visitor: ${messages[0]?.content}`,
          `[${messages[1]?.createdAt}] operator one (operator): =1+1 sorry about that, a new one ships today`,
          `[${messages[2]?.createdAt}] visitor: Thanks!`,
          'See you',
        ].join('\n'),
        '3',
        'false',
      ],
    ]);
    expect(response.text).not.toContain('INTERNAL-NOTE');
  });

  it('stops at the first 5,000 messages and says it did', async () => {
    const big = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId: visitor.visitor.id, title: 'Long one' },
    });
    await seedMessages(tenant.orgId, big.body.id, visitor.visitor.id, 5_001);
    const response = await call('GET', `/api/conversations/${big.body.id}/transcript?format=csv`, {
      token: tenant.apiKey,
    });
    expect(response.status).toBe(200);
    const [, row] = parse(response.text) as string[][];
    const lines = row?.[3]?.split('\n') ?? [];
    expect(lines).toHaveLength(5_000);
    expect(lines[0]).toMatch(/ visitor: message 1$/);
    expect(lines[4_999]).toMatch(/ visitor: message 5000$/);
    expect(row?.slice(4)).toEqual(['5000', 'true']);

    const mailed = await call<Json>('POST', `/api/conversations/${big.body.id}/transcript`, {
      token: tenant.apiKey,
      body: { email: 'long@example.com' },
    });
    expect(mailed.status, mailed.text).toBe(202);
    expect(mailed.body).toEqual({ success: true, messageCount: 5_000, truncated: true });
    const mail = await mailTo('long@example.com');
    expect(mail?.body.text).toContain('message 5000');
    expect(mail?.body.text).not.toContain('message 5001');
    expect(mail?.body.text?.trimEnd()).toMatch(
      /first 5,000 messages of the conversation; later messages are not included\.$/,
    );
  }, 60_000);

  it('is 404 for another organization, for a visitor token 403, and refuses an unknown format', async () => {
    const other = await createTenant();
    const foreign = await call('GET', `/api/conversations/${conversationId}/transcript`, {
      token: other.apiKey,
    });
    expect(foreign.status).toBe(404);
    const byVisitor = await call('GET', `/api/conversations/${conversationId}/transcript`, {
      token: visitor.token,
    });
    expect(byVisitor.status).toBe(403);
    const odd = await call('GET', `/api/conversations/${conversationId}/transcript?format=docx`, {
      token: tenant.apiKey,
    });
    expect(odd.status).toBe(422);
  });
});

describe('GET /api/conversations/{id}/transcript?format=pdf', () => {
  it('queues a job that completes with a PDF anyone holding the URL can download', async () => {
    const accepted = await call<{ jobId: string; status: string; statusUrl: string }>(
      'GET',
      `/api/conversations/${conversationId}/transcript?format=pdf`,
      { token: tenant.apiKey },
    );
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toEqual({
      jobId: expect.any(String),
      status: 'queued',
      statusUrl: `/api/export/jobs/${accepted.body.jobId}`,
    });
    const job = await eventually(
      async () =>
        (
          await call<{ status: string; downloadUrl?: string; expiresAt?: string }>(
            'GET',
            accepted.body.statusUrl,
            {
              token: tenant.operatorSession,
            },
          )
        ).body,
      (body) => body.status === 'completed' || body.status === 'failed',
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(job.status).toBe('completed');
    expect(Date.parse(String(job.expiresAt))).toBeGreaterThan(Date.now());
    const download = await fetch(String(job.downloadUrl));
    expect(download.status).toBe(200);
    const pdf = Buffer.from(await download.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.length).toBeGreaterThan(500);

    const other = await createTenant();
    const foreign = await call('GET', accepted.body.statusUrl, { token: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(
      (await call('GET', `/api/export/jobs/${crypto.randomUUID()}`, { token: tenant.apiKey })).status,
    ).toBe(404);
  }, 30_000);
});

describe('POST /api/conversations/{id}/transcript', () => {
  it('e-mails a text and an escaped HTML part without internal notes', async () => {
    const sent = await call<Json>('POST', `/api/conversations/${conversationId}/transcript`, {
      token: tenant.operatorSession,
      body: { email: 'customer@example.com' },
    });
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body).toEqual({ success: true, messageCount: 3, truncated: false });
    const mail = await mailTo('customer@example.com');
    expect(mail?.subject).toBe('Transcript: Broken <b>parcel</b> & "box"');
    const html = mail?.body.html ?? '';
    // What sanitizing kept of the first message still holds markup characters; the HTML escapes them.
    const first = messages[0]?.content ?? '';
    expect(first).toMatch(/[<&"]/);
    expect(html).toContain(
      first
        .replaceAll('&', '&amp;')
        .replaceAll('<', '&lt;')
        .replaceAll('>', '&gt;')
        .replaceAll('"', '&quot;'),
    );
    expect(html).toContain('Broken &lt;b&gt;parcel&lt;/b&gt; &amp; &quot;box&quot;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('Thanks!<br>See you');
    const text = mail?.body.text ?? '';
    expect(text).toContain(`[${messages[0]?.createdAt}] visitor: ${first}`);
    expect(text).toContain('operator one (operator): =1+1 sorry about that');
    for (const part of [html, text]) expect(part).not.toContain('INTERNAL-NOTE');
  });

  it('refuses visitors (403), other organizations (404) and a malformed address (422)', async () => {
    const byVisitor = await call('POST', `/api/conversations/${conversationId}/transcript`, {
      token: visitor.token,
      body: { email: 'me@example.com' },
    });
    expect(byVisitor.status).toBe(403);
    const other = await createTenant();
    const foreign = await call('POST', `/api/conversations/${conversationId}/transcript`, {
      token: other.apiKey,
      body: { email: 'x@example.com' },
    });
    expect(foreign.status).toBe(404);
    const malformed = await call<{ error: { details: Json } }>(
      'POST',
      `/api/conversations/${conversationId}/transcript`,
      { token: tenant.apiKey, body: { email: 'not an address' } },
    );
    expect(malformed.status).toBe(422);
    expect(malformed.body.error.details.field).toBe('email');
  });

  it('limits each organization to its hourly allowance with a clear 429', async () => {
    const limited = await createTenant();
    const someone = await createVisitor(limited.widgetKey);
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token: someone.token,
      body: { message: 'hi' },
    });
    const path = `/api/conversations/${created.body.id}/transcript`;
    const send = (i: number) =>
      call<{ error: { code: string; details: Json } }>('POST', path, {
        token: limited.apiKey,
        body: { email: `spam-${i}@example.com` },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await send(i)).status);
    expect(statuses.every((status) => status === 202)).toBe(true);
    const refused = await send(30);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(refused.body.error.details.reason).toBe('transcript_email_limit');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another organization is not affected.
    const sent = await call('POST', `/api/conversations/${conversationId}/transcript`, {
      token: tenant.apiKey,
      body: { email: 'still-fine@example.com' },
    });
    expect(sent.status).toBe(202);
  }, 60_000);
});
