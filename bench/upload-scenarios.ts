import type { DemoCredentials } from '../infra/local/seed';
import { stringAt } from './fixtures';
import type { Call, Scenario } from './round-trips';

/** What the attachment scenarios need from the round-trip bench. */
export interface UploadFixtureContext {
  demo: DemoCredentials;
  conversationId: string;
  request: (call: Call, status: number, what: string) => Promise<unknown>;
}

/** A minimal PNG (its signature and IHDR), padded: what `complete` recognizes as image/png. */
const png = (size: number): Buffer => {
  const bytes = Buffer.alloc(size, 7);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(
    bytes,
  );
  return bytes;
};

/**
 * Attachments: create (one PutItem), complete (one GetItem, the conditional UpdateItem; S3 calls
 * besides: HEAD, a ranged GET, a streamed GET, a copy and a delete, not counted here) and a message
 * with 10 attachments (one BatchGetItem of the uploads, then the message's transaction with ten
 * claims). An upload can only be attached by its own caller, so these fixtures are made with the
 * measured credential (the operator session), unlike the other scenarios' fixtures.
 */
export async function uploadScenarios(context: UploadFixtureContext): Promise<Scenario[]> {
  const { demo, conversationId, request } = context;
  const token = demo.adminSession;
  const bytes = png(4096);
  const pendingUpload = async (): Promise<string> => {
    const created = await request(
      {
        method: 'POST',
        path: '/api/uploads',
        token,
        body: { filename: 'bench.png', contentType: 'image/png', size: bytes.length },
      },
      201,
      'create an upload',
    );
    const put = await fetch(stringAt(created, 'uploadUrl'), {
      method: 'PUT',
      headers: { 'Content-Type': 'image/png' },
      body: bytes,
    });
    if (put.status !== 200) throw new Error(`PUT to the upload URL: ${put.status}`);
    return stringAt(created, 'id');
  };
  const readyUpload = async (): Promise<string> => {
    const id = await pendingUpload();
    await request({ method: 'POST', path: `/api/uploads/${id}/complete`, token }, 200, 'complete an upload');
    return id;
  };
  let ready: Promise<string> | undefined;
  return [
    {
      route: 'POST /api/uploads',
      caller: 'operator',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/uploads',
        token,
        body: { filename: 'invoice.pdf', contentType: 'application/pdf', size: 48_213 },
      }),
    },
    {
      route: 'POST /api/uploads/{id}/complete',
      caller: 'operator',
      expectedStatus: 200,
      call: async () => ({ method: 'POST', path: `/api/uploads/${await pendingUpload()}/complete`, token }),
    },
    {
      // A ready upload: the read answers with a fresh presigned download URL (no S3 call).
      route: 'GET /api/uploads/{id}',
      caller: 'operator',
      expectedStatus: 200,
      call: async () => {
        ready ??= readyUpload();
        return { method: 'GET', path: `/api/uploads/${await ready}`, token };
      },
    },
    {
      route: 'POST /api/conversations/{id}/messages',
      variant: '10 attachments',
      caller: 'operator',
      expectedStatus: 201,
      target: 'transaction',
      call: async () => ({
        method: 'POST',
        path: `/api/conversations/${conversationId}/messages`,
        token,
        body: { attachmentIds: await Promise.all(Array.from({ length: 10 }, readyUpload)) },
      }),
    },
  ];
}
