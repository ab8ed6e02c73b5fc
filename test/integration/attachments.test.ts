import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';
import { type ApiResponse, call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';
import {
  UPLOADS_BUCKET as BUCKET,
  png,
  putUpload as put,
  readyUpload as ready,
  type Upload,
  uploadsBucket,
} from '../helpers/uploads';

/**
 * Attachments end to end: the service hands out presigned URLs, the test PUTs and GETs bytes
 * straight to and from the S3 emulator (as a browser would), and what `complete` refuses never
 * stays in the bucket. In-process stack: the expiry test moves the clock.
 */
const time = useInProcessStack();

type Attachment = {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  downloadUrl: string;
  expiresAt: string;
};
type Message = { id: string; type: string; content: string; attachments: Attachment[] };
type ErrorBody = { error: { code: string; details?: Record<string, unknown> } };

const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

const pdf = (size = 64) => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(size - 9, 0x20)]);

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };
let conversationId: string;
const bucket = uploadsBucket();
const storedFor = bucket.storedFor;

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
  conversationId = (
    await call<{ id: string }>('POST', '/api/conversations', { token: visitor.token, body: {} })
  ).body.id;
});

afterAll(() => bucket.destroy());

const create = (token: string, body: Record<string, unknown>) =>
  call<Upload>('POST', '/api/uploads', { token, body });
const complete = (token: string, id: string) =>
  call<Upload>('POST', `/api/uploads/${id}/complete`, { token });

const post = (token: string, body: Record<string, unknown>, id = conversationId) =>
  call<Message>('POST', `/api/conversations/${id}/messages`, { token, body });

describe('an upload, end to end', () => {
  it('creates, takes the bytes by presigned PUT, checks them, attaches them, and serves them back', async () => {
    const bytes = png(4096);
    const created = await create(visitor.token, {
      filename: 'screen shot "1".png',
      contentType: 'image/png',
      size: bytes.length,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'pending',
      uploadMethod: 'PUT',
      uploadHeaders: { 'Content-Type': 'image/png' },
      size: 4096,
    });
    const expiresIn = Date.parse(created.body.expiresAt ?? '') - Date.now();
    expect(expiresIn).toBeGreaterThan(14 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(15 * 60_000 + 1_000);
    // The URL is the emulator's, reachable by any client of the local stack; nothing through the API.
    expect(new URL(created.body.uploadUrl ?? '').origin).toBe(new URL(inject('endpoints').s3 ?? '').origin);

    expect((await put(created.body, bytes)).status).toBe(200);
    const done = await complete(visitor.token, created.body.id);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('ready');
    expect(done.body.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    // Completing again is the same answer, not an error.
    const again = await complete(visitor.token, created.body.id);
    expect(again.status).toBe(200);
    expect(again.body.sha256).toBe(done.body.sha256);
    // Checked, the file lives under files/ only: the pending object is gone.
    expect(await storedFor(created.body.id)).toEqual([`files/${tenant.orgId}/${created.body.id}`]);

    const sent = await post(visitor.token, { attachmentIds: [created.body.id] });
    expect(sent.status).toBe(201);
    expect(sent.body.type).toBe('file');
    expect(sent.body.content).toBe('');
    expect(sent.body.attachments).toEqual([
      expect.objectContaining({
        id: created.body.id,
        filename: 'screen shot "1".png',
        contentType: 'image/png',
        size: 4096,
        sha256: done.body.sha256,
      }),
    ]);

    // Every read signs a fresh URL; the bytes come back unchanged.
    const listed = await call<{ data: Message[] }>('GET', `/api/conversations/${conversationId}/messages`, {
      token: tenant.apiKey,
    });
    const attachment = listed.body.data.find((message) => message.id === sent.body.id)?.attachments[0];
    expect(attachment).toBeDefined();
    const downloaded = await fetch(attachment?.downloadUrl ?? '');
    expect(downloaded.status).toBe(200);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(bytes)).toBe(true);
    // A download, not shown inline: the object itself carries the disposition, locally as in AWS.
    expect(downloaded.headers.get('content-disposition')).toMatch(
      /^attachment; filename="screen shot _1_.png"/,
    );
    expect(downloaded.headers.get('content-type')).toBe('image/png');
    // The signed URL also asks S3 for a download of the declared type.
    const signed = new URL(attachment?.downloadUrl ?? '');
    expect(signed.searchParams.get('response-content-disposition')).toMatch(
      /^attachment; filename="screen shot _1_.png"/,
    );
    expect(signed.searchParams.get('response-content-type')).toBe('image/png');

    const one = await call<Message>('GET', `/api/conversations/${conversationId}/messages/${sent.body.id}`, {
      token: visitor.token,
    });
    expect(one.body.attachments[0]?.downloadUrl).toMatch(/^http/);
    const viaUpload = await call<Upload>('GET', `/api/uploads/${created.body.id}`, { token: tenant.apiKey });
    expect(viaUpload.body).toMatchObject({ status: 'ready', sha256: done.body.sha256 });
    expect(viaUpload.body.downloadUrl).toMatch(/^http/);
  });

  it('takes text with attachments, at most 10 of them', async () => {
    const files = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        ready(tenant.operatorSession, pdf(100 + i), 'application/pdf', `f${i}.pdf`),
      ),
    );
    const sent = await post(tenant.operatorSession, {
      content: 'Here are the invoices',
      attachmentIds: files.map((file) => file.id),
    });
    expect(sent.status).toBe(201);
    expect(sent.body.type).toBe('text');
    expect(sent.body.attachments.map((file) => file.id)).toEqual(files.map((file) => file.id));
    const eleven = await post(tenant.operatorSession, {
      attachmentIds: [...files.map((file) => file.id), crypto.randomUUID()],
    });
    expect(eleven.status).toBe(422);
    expect(errorOf(eleven).details?.field).toBe('attachmentIds');
  });
});

describe('what complete refuses leaves nothing behind', () => {
  it('is 409 not_uploaded when nothing was put', async () => {
    const created = await create(visitor.token, { filename: 'a.png', contentType: 'image/png', size: 64 });
    const done = await complete(visitor.token, created.body.id);
    expect(done.status).toBe(409);
    expect(errorOf(done)).toMatchObject({ code: 'CONFLICT', details: { reason: 'not_uploaded' } });
    expect(await storedFor(created.body.id)).toEqual([]);
  });

  it('is 422 size_mismatch when another length was stored (the emulator does not enforce the signed length)', async () => {
    const created = await create(visitor.token, { filename: 'a.png', contentType: 'image/png', size: 64 });
    const response = await put(created.body, png(80));
    // S3 refuses this PUT (the length is signed): then nothing is stored and complete is 409.
    expect([200, 403]).toContain(response.status);
    const done = await complete(visitor.token, created.body.id);
    if (response.status === 403) expect(done.status).toBe(409);
    else {
      expect(done.status).toBe(422);
      expect(errorOf(done).details).toMatchObject({ reason: 'size_mismatch', field: 'size' });
    }
    expect(await storedFor(created.body.id)).toEqual([]);
  });

  it.each([
    ['a PNG declared as a PDF', 'application/pdf', png(64)],
    ['a PDF declared as a PNG', 'image/png', pdf(64)],
    [
      'HTML declared as text',
      'text/plain',
      Buffer.from('<html><body><script>alert(1)</script></body></html>'),
    ],
    ['a script declared as text', 'text/csv', Buffer.from('  <script>alert(document.cookie)</script>')],
    ['binary declared as JSON', 'application/json', png(64)],
    ['text declared as a zip', 'application/zip', Buffer.from('just some text, not an archive')],
  ])('is 422 type_mismatch for %s, and the object is deleted', async (_what, contentType, bytes) => {
    const created = await create(visitor.token, { filename: 'file', contentType, size: bytes.length });
    expect((await put(created.body, bytes)).status).toBe(200);
    const done = await complete(visitor.token, created.body.id);
    expect(done.status).toBe(422);
    expect(errorOf(done).details).toMatchObject({ reason: 'type_mismatch', field: 'contentType' });
    expect(await storedFor(created.body.id)).toEqual([]);
    // The upload stays pending: the right bytes may still be put and completed.
    expect(
      (await call<Upload>('GET', `/api/uploads/${created.body.id}`, { token: visitor.token })).body.status,
    ).toBe('pending');
  });

  it('is 422 type_mismatch when another type than the signed one was stored', async () => {
    const bytes = Buffer.from('plain words');
    const created = await create(visitor.token, {
      filename: 'a.txt',
      contentType: 'text/plain',
      size: bytes.length,
    });
    expect((await put(created.body, bytes, { 'Content-Type': 'text/html' })).status).toBe(200);
    const done = await complete(visitor.token, created.body.id);
    expect(done.status).toBe(422);
    expect(errorOf(done).details).toMatchObject({ reason: 'type_mismatch' });
    expect(await storedFor(created.body.id)).toEqual([]);
  });

  it('accepts plain text, CSV and JSON that are what they say', async () => {
    for (const [contentType, text] of [
      ['text/plain', 'Order 1234 is late.\nPlease help.'],
      ['text/csv', 'order,status\n1234,late\n'],
      ['application/json', ' {"order": 1234}'],
    ] as const) {
      const done = await ready(visitor.token, Buffer.from(text), contentType, 'notes');
      expect(done.status).toBe('ready');
    }
  });

  it.each([
    ['an HTML type', { contentType: 'text/html' }, 'contentType'],
    ['SVG', { contentType: 'image/svg+xml' }, 'contentType'],
    ['a script', { contentType: 'application/javascript' }, 'contentType'],
    ['an executable', { contentType: 'application/x-msdownload' }, 'contentType'],
    ['a path in the name', { filename: '../etc/passwd' }, 'filename'],
    ['a control character in the name', { filename: 'a\u0000.png' }, 'filename'],
    ['an empty file', { size: 0 }, 'size'],
    ['a file over UPLOAD_MAX_BYTES', { size: 26_214_401 }, 'size'],
    ['an unknown field', { public: true }, 'public'],
  ])('refuses %s before any URL is signed (422)', async (_what, change, field) => {
    const response = await create(visitor.token, {
      filename: 'a.png',
      contentType: 'image/png',
      size: 64,
      ...change,
    });
    expect(response.status).toBe(422);
    expect(errorOf(response).details?.field).toBe(field);
  });
});

describe('who may see and attach an upload', () => {
  it('keeps visitors to their own uploads and the files of their own conversations', async () => {
    const other = await createVisitor(tenant.widgetKey);
    const mine = await ready(visitor.token, png());
    expect((await call('GET', `/api/uploads/${mine.id}`, { token: other.token })).status).toBe(404);
    expect((await complete(other.token, mine.id)).status).toBe(404);
    // An operator's file sent into the visitor's conversation is the visitor's to see.
    const fromOperator = await ready(tenant.operatorSession, pdf(), 'application/pdf', 'reply.pdf');
    expect((await call('GET', `/api/uploads/${fromOperator.id}`, { token: visitor.token })).status).toBe(404);
    expect((await post(tenant.operatorSession, { attachmentIds: [fromOperator.id] })).status).toBe(201);
    expect((await call('GET', `/api/uploads/${fromOperator.id}`, { token: visitor.token })).status).toBe(200);
    expect((await call('GET', `/api/uploads/${fromOperator.id}`, { token: other.token })).status).toBe(404);
  });

  it('attaches only ready uploads of the same caller, once (422 on attachmentIds.<i>)', async () => {
    const good = await ready(visitor.token, png());
    const pending = (await create(visitor.token, { filename: 'a.png', contentType: 'image/png', size: 64 }))
      .body;
    const operators = await ready(tenant.operatorSession, png());
    const cases: [string[], string][] = [
      [[good.id, pending.id], 'attachmentIds.1'],
      [[operators.id], 'attachmentIds.0'],
      [[good.id, crypto.randomUUID()], 'attachmentIds.1'],
      [[good.id, good.id], 'attachmentIds.1'],
    ];
    for (const [attachmentIds, field] of cases) {
      const response = await post(visitor.token, { attachmentIds });
      expect(response.status).toBe(422);
      expect(errorOf(response).details?.field).toBe(field);
    }
    expect((await post(visitor.token, { attachmentIds: [good.id] })).status).toBe(201);
    const twice = await post(visitor.token, { content: 'again', attachmentIds: [good.id] });
    expect(twice.status).toBe(422);
    expect(errorOf(twice).details?.field).toBe('attachmentIds.0');
    // Neither content nor files: still 422 on content.
    expect(errorOf(await post(visitor.token, { attachmentIds: [] })).details?.field).toBe('content');
  });

  it('never reaches across organizations (404 by id, 422 on attach)', async () => {
    const foreign = await createTenant();
    const theirs = await ready(foreign.apiKey, png());
    expect((await call('GET', `/api/uploads/${theirs.id}`, { token: tenant.apiKey })).status).toBe(404);
    expect((await complete(tenant.apiKey, theirs.id)).status).toBe(404);
    const response = await post(tenant.apiKey, { operatorId: tenant.operatorId, attachmentIds: [theirs.id] });
    expect(response.status).toBe(422);
    expect(errorOf(response).details?.field).toBe('attachmentIds.0');
    expect((await call('GET', '/api/uploads/not-a-uuid', { token: tenant.apiKey })).status).toBe(404);
  });

  it('lets exactly one of two concurrent posts attach an upload', async () => {
    for (let round = 0; round < 3; round++) {
      const file = await ready(visitor.token, png());
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          post(visitor.token, { content: `race ${i}`, attachmentIds: [file.id] }),
        ),
      );
      expect(results.filter((result) => result.status === 201)).toHaveLength(1);
      for (const lost of results.filter((result) => result.status !== 201)) {
        expect(lost.status).toBe(422);
        expect(errorOf(lost).details?.field).toBe('attachmentIds.0');
      }
    }
  });
});

describe('what carries files without URLs', () => {
  it('gives the events feed and exports the metadata only', async () => {
    const file = await ready(tenant.apiKey, png());
    const sent = await post(tenant.apiKey, { operatorId: tenant.operatorId, attachmentIds: [file.id] });
    const events = await eventually(
      () =>
        call<{ data: { type: string; data: { id: string; attachments?: unknown[] } }[] }>(
          'GET',
          '/api/events?types=message.created',
          { token: tenant.apiKey },
        ),
      (response) => response.body.data.some((event) => event.data.id === sent.body.id),
    );
    const event = events.body.data.find((entry) => entry.data.id === sent.body.id);
    expect(event?.data.attachments).toEqual([
      {
        id: file.id,
        filename: file.filename,
        contentType: 'image/png',
        size: file.size,
        sha256: file.sha256,
      },
    ]);
    expect(JSON.stringify(event)).not.toContain('X-Amz-Signature');

    const exported = await call<{ id: string; messages: { id: string; attachments: unknown[] }[] }[]>(
      'GET',
      '/api/export/conversations?format=json',
      { token: tenant.apiKey },
    );
    const message = exported.body
      .flatMap((conversation) => conversation.messages)
      .find((entry) => entry.id === sent.body.id);
    expect(message?.attachments).toEqual([expect.objectContaining({ id: file.id, sha256: file.sha256 })]);
    expect(exported.text).not.toContain('X-Amz-Signature');
  });
});

describe('a file the malware scan flags', () => {
  it('is rejected and never served again: no URL, no attachment, no object', async () => {
    const { handler } = await import('../../functions/workers/malware-scan-result');
    const flagged = await ready(visitor.token, png());
    const attached = await ready(visitor.token, png());
    const sent = await post(visitor.token, { attachmentIds: [attached.id] });
    const downloadUrl = sent.body.attachments[0]?.downloadUrl ?? '';
    expect((await fetch(downloadUrl)).status).toBe(200);
    // What EventBridge hands the queue for a GuardDuty finding (events/sqs/malware-scan-result.json).
    const finding = (id: string) => ({
      messageId: crypto.randomUUID(),
      body: JSON.stringify({
        'detail-type': 'GuardDuty Malware Protection Object Scan Result',
        detail: {
          s3ObjectDetails: { bucketName: BUCKET, objectKey: `files/${tenant.orgId}/${id}` },
          scanResultDetails: { scanResultStatus: 'THREATS_FOUND' },
        },
      }),
    });
    const result = await handler(
      { Records: [finding(flagged.id), finding(attached.id)] } as never,
      lambdaContext('malware-scan-result'),
    );
    expect(result.batchItemFailures).toEqual([]);
    const after = await call<Upload>('GET', `/api/uploads/${flagged.id}`, { token: visitor.token });
    expect(after.body.status).toBe('rejected');
    expect(after.body.downloadUrl).toBeUndefined();
    expect(await storedFor(flagged.id)).toEqual([]);
    const refused = await post(visitor.token, { attachmentIds: [flagged.id] });
    expect(refused.status).toBe(422);
    // Already attached: the link handed out no longer serves the file.
    expect((await fetch(downloadUrl)).status).toBe(404);
  });
});

describe('lifecycle', () => {
  it('deletes the files of a purged conversation: 404, and gone from storage', async () => {
    const conversation = (
      await call<{ id: string }>('POST', '/api/conversations', { token: visitor.token, body: {} })
    ).body.id;
    const file = await ready(visitor.token, png());
    expect((await post(visitor.token, { attachmentIds: [file.id] }, conversation)).status).toBe(201);
    expect(await storedFor(file.id)).toHaveLength(1);
    const deleted = await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: [conversation] },
    });
    expect(deleted.status).toBe(200);
    // The shared stack's workers purge it (stream → queue → purge worker).
    const gone = await eventually(
      async () => (await call('GET', `/api/uploads/${file.id}`, { token: tenant.apiKey })).status,
      (status) => status === 404,
      { timeoutMs: 30_000 },
    );
    expect(gone).toBe(404);
    expect(await storedFor(file.id)).toEqual([]);
  });

  it('forgets a pending upload not completed within an hour (404), even when its bytes are there', async () => {
    const bytes = png();
    const created = await create(visitor.token, {
      filename: 'late.png',
      contentType: 'image/png',
      size: bytes.length,
    });
    expect((await put(created.body, bytes)).status).toBe(200);
    time.advance(59 * 60_000);
    expect((await call('GET', `/api/uploads/${created.body.id}`, { token: visitor.token })).status).toBe(200);
    time.advance(60_000);
    expect((await call('GET', `/api/uploads/${created.body.id}`, { token: visitor.token })).status).toBe(404);
    expect((await complete(visitor.token, created.body.id)).status).toBe(404);
    time.reset();
  });
});
