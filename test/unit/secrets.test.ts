import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AwsCredentials, getSecretString, signedHeaders } from '../../shared/secrets';

/**
 * The hand-signed GetSecretValue against a fake Secrets Manager on loopback: the fake checks every
 * request's signature with the SDK's own signer, so a request it accepts is one AWS would accept.
 */

const credentials: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//session+token=',
};
const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf';

type Data = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: Data) =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 / HMAC-SHA-256 in the shape the SDK signer takes (what @smithy/hash-node does). */
class Sha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: Data) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(data: Data): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/** The SDK's signer, run on the given headers (the ones a request lists as signed). */
async function sdkAuthorization(
  headers: Record<string, string>,
  body: string,
  region: string,
  signer: AwsCredentials,
  signingDate: Date,
): Promise<string> {
  const { authorization: _, ...signed } = headers;
  // applyChecksum off: it would add x-amz-content-sha256, which Secrets Manager does not need; a
  // request that carries it (the SDK client's) has it among its signed headers already.
  const signature = new SignatureV4({
    credentials: signer,
    region,
    service: 'secretsmanager',
    sha256: Sha256,
    applyChecksum: false,
  });
  const request = await signature.sign(
    {
      method: 'POST',
      protocol: 'https:',
      hostname: signed.host ?? '',
      path: '/',
      headers: signed,
      body,
      query: {},
    },
    { signingDate },
  );
  return String(request.headers.authorization);
}

describe('signedHeaders', () => {
  it.each([
    ['with a session token (Lambda)', credentials, 'eu-west-1', '2026-11-24T21:05:09.123Z'],
    ['without one', { ...credentials, sessionToken: undefined }, 'us-east-1', '2026-01-01T00:00:00.000Z'],
    ['another region and day', credentials, 'ap-southeast-2', '2027-02-28T23:59:59.999Z'],
  ])('gives the Authorization the SDK signer gives, %s', async (_case, signer, region, at) => {
    const now = new Date(at);
    const body = JSON.stringify({ SecretId: secretArn });
    const headers = signedHeaders({
      host: `secretsmanager.${region}.amazonaws.com`,
      body,
      region,
      credentials: signer,
      now,
    });
    expect(headers.authorization).toBe(await sdkAuthorization(headers, body, region, signer, now));
    expect(headers['x-amz-security-token']).toBe(signer.sessionToken);
  });

  it('signs the body: another secret id, another signature', () => {
    const now = new Date();
    const sign = (id: string) =>
      signedHeaders({
        host: 'h',
        body: JSON.stringify({ SecretId: id }),
        region: 'eu-west-1',
        credentials,
        now,
      }).authorization;
    expect(sign('a')).not.toBe(sign('b'));
  });
});

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
  signatureValid: boolean;
}

describe('getSecretString', () => {
  const seen: Seen[] = [];
  /** Answers, in order, for the next requests; then the secret. */
  let script: { status: number; body: string }[] = [];
  let stall = false;
  let server: Server;
  let endpoint: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
        );
        const signingDate = parseAmzDate(headers['x-amz-date'] ?? '');
        const region = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(headers.authorization ?? '')?.[1] ?? '';
        const keep = (headers.authorization ?? '').match(/SignedHeaders=([^,]+)/)?.[1]?.split(';') ?? [];
        const signed = Object.fromEntries(Object.entries(headers).filter(([name]) => keep.includes(name)));
        const expected = await sdkAuthorization(signed, body, region, credentials, signingDate);
        seen.push({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body,
          signatureValid: expected === headers.authorization,
        });
        if (stall) return;
        const next = script.shift() ?? {
          status: 200,
          body: JSON.stringify({
            ARN: secretArn,
            Name: 'cursor',
            SecretString: '{"current":"k"}',
            VersionId: 'v1',
          }),
        };
        response.writeHead(next.status, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(next.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
    script = [];
    stall = false;
  });

  const read = (options: Parameters<typeof getSecretString>[1] = {}) =>
    getSecretString(secretArn, { endpoint, credentials, ...options });

  it('reads the string value with one request whose signature the SDK signer confirms', async () => {
    await expect(read()).resolves.toBe('{"current":"k"}');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.signatureValid).toBe(true);
    // The region comes from the ARN, not from the environment.
    expect(seen[0]?.headers.authorization).toContain('/eu-west-1/secretsmanager/aws4_request');
  });

  it('sends the request the SDK client sends: method, path, target, content type and body', async () => {
    const client = new SecretsManagerClient({ region: 'eu-west-1', endpoint, credentials, maxAttempts: 1 });
    await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
    client.destroy();
    await read();
    const [sdk, ours] = seen;
    const shape = (request: Seen | undefined) => ({
      method: request?.method,
      url: request?.url,
      target: request?.headers['x-amz-target'],
      contentType: request?.headers['content-type'],
      body: JSON.parse(request?.body ?? 'null') as unknown,
      token: request?.headers['x-amz-security-token'],
      signatureValid: request?.signatureValid,
    });
    expect(shape(ours)).toEqual(shape(sdk));
    expect(shape(ours).target).toBe('secretsmanager.GetSecretValue');
  });

  it('does not retry what retrying cannot fix, and names the error', async () => {
    script = [
      { status: 400, body: JSON.stringify({ __type: 'AccessDeniedException', Message: 'not allowed' }) },
    ];
    await expect(read()).rejects.toThrow('Secrets Manager AccessDeniedException: not allowed');
    script = [
      {
        status: 400,
        body: JSON.stringify({
          __type: 'com.amazonaws.secretsmanager#ResourceNotFoundException',
          message: 'gone',
        }),
      },
    ];
    await expect(read()).rejects.toThrow('Secrets Manager ResourceNotFoundException: gone');
    expect(seen).toHaveLength(2);
  });

  it('retries throttling and 5xx, each attempt signed again, up to three attempts', async () => {
    script = [
      { status: 400, body: JSON.stringify({ __type: 'ThrottlingException', message: 'Rate exceeded' }) },
      { status: 503, body: '<html>unavailable</html>' },
    ];
    await expect(read()).resolves.toBe('{"current":"k"}');
    expect(seen.map((request) => request.signatureValid)).toEqual([true, true, true]);
    script = [1, 2, 3].map(() => ({ status: 500, body: '{"__type":"InternalServiceError"}' }));
    await expect(read()).rejects.toThrow('Secrets Manager InternalServiceError');
    expect(seen).toHaveLength(6);
  });

  it('gives up on a silent endpoint after its timeout, and on a secret without a string', async () => {
    stall = true;
    await expect(read({ timeoutMs: 100, attempts: 2 })).rejects.toThrow(
      /unreachable: no answer within 100 ms/,
    );
    expect(seen).toHaveLength(2);
    stall = false;
    script = [{ status: 200, body: JSON.stringify({ ARN: secretArn, SecretBinary: 'AAEC' }) }];
    await expect(read()).rejects.toThrow(/has no string value/);
  });

  it('fails plainly without credentials', async () => {
    const saved = { ...process.env };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    try {
      await expect(getSecretString(secretArn, { endpoint })).rejects.toThrow(/No AWS credentials/);
    } finally {
      Object.assign(process.env, saved);
    }
  });
});

function parseAmzDate(value: string): Date {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return new Date(Number.NaN);
  const [, y, mo, d, h, mi, s] = match;
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
}
