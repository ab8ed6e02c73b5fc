import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Statement } from '../iam/policy';
import { keyOfLocalCiphertext } from './iam/checks';
import { denialMessage, deniedResponse, firstDenial } from './iam/denial';

/**
 * Stand-ins for what no npm emulator covers, with the calls the functions make, on one loopback
 * port: KMS `Encrypt`/`Decrypt` (webhook signing secrets, AI provider keys) in its JSON protocol,
 * reached through the SDK's `AWS_ENDPOINT_URL_KMS` as the other services through theirs; Secrets
 * Manager `GetSecretValue` in the same protocol (`AWS_ENDPOINT_URL_SECRETS_MANAGER`, for SDK
 * clients such as the rotation function's); and the Parameters and Secrets Lambda Extension's
 * `GET /secretsmanager/get?secretId=` (shared/secrets.ts: the cursor key ring, the Discord bot
 * token), the isolate's PARAMETERS_SECRETS_EXTENSION_HTTP_PORT pointing here. Each request is
 * authorized against the calling function's role, like every SDK call (iam/enforce.ts): an SDK request
 * by the access key its isolate signs with, an extension request by the session token it sends in
 * `X-Aws-Parameters-Secrets-Token`, as Lambda's extension takes it.
 */

export interface KeyServiceOptions {
  region: string;
  account: string;
  /** Key ARN → its key material's seed (the same seed gives the same key after a restart). */
  keys: Readonly<Record<string, string>>;
  /** Secret ARN → its string value. */
  secrets: Readonly<Record<string, string>>;
  /**
   * Access key id or session token → the caller (its role's statements); an unknown caller is
   * refused.
   */
  callers: ReadonlyMap<string, { functionName: string; roleName: string; statements: readonly Statement[] }>;
}

export interface KeyService {
  endpoint: string;
  close(): Promise<void>;
}

const json = (
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', ...headers });
  response.end(JSON.stringify(body));
};

const failure = (response: ServerResponse, type: string, message: string) =>
  json(response, 400, { __type: type, message });

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The encryption context as AAD: the same pairs in any order give the same bytes. */
const aad = (context: Record<string, string> | undefined) =>
  Buffer.from(JSON.stringify(Object.entries(context ?? {}).sort(([a], [b]) => a.localeCompare(b))));

export async function startKeyService(options: KeyServiceOptions): Promise<KeyService> {
  const material = new Map<string, Buffer>();
  for (const [arn, seed] of Object.entries(options.keys))
    material.set(arn, createHmac('sha256', seed).update(arn).digest());
  const keyArnOf = (keyId: string) =>
    keyId.startsWith('arn:') ? keyId : `arn:aws:kms:${options.region}:${options.account}:key/${keyId}`;

  /** The extension's API: its answer is GetSecretValue's JSON, its failures a status and a message. */
  const extension = (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const text = (status: number, message: string) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(message);
    };
    const caller = options.callers.get(String(request.headers['x-aws-parameters-secrets-token'] ?? ''));
    if (!caller) return text(401, 'missing or invalid X-Aws-Parameters-Secrets-Token');
    const secretId = url.searchParams.get('secretId') ?? '';
    const denial = firstDenial(
      [{ action: 'secretsmanager:GetSecretValue', resources: [secretId] }],
      caller.statements,
    );
    if (denial) return text(400, denialMessage(denial, { ...caller, account: options.account }));
    const value = options.secrets[secretId];
    if (value === undefined) return text(400, "Secrets Manager can't find the specified secret.");
    json(response, 200, {
      ARN: secretId,
      Name: secretId.split(':').pop(),
      SecretString: value,
      VersionId: 'local',
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 0,
    });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'GET' && url.pathname === '/secretsmanager/get') {
      extension(request, response, url);
      return;
    }
    const target = String(request.headers['x-amz-target'] ?? '');
    const body = JSON.parse((await readBody(request)) || '{}') as Record<string, unknown>;
    const accessKey = /Credential=([^/]+)\//.exec(String(request.headers.authorization ?? ''))?.[1] ?? '';
    const caller = options.callers.get(accessKey);
    const service = target.startsWith('TrentService.') ? 'kms' : 'secretsmanager';
    const operation = target.slice(target.indexOf('.') + 1);
    let resource = '';
    if (service === 'secretsmanager') resource = String(body.SecretId ?? '');
    else {
      const named =
        typeof body.KeyId === 'string'
          ? body.KeyId
          : keyOfLocalCiphertext(Buffer.from(String(body.CiphertextBlob ?? ''), 'base64'));
      resource = keyArnOf(named ?? '');
    }
    if (!caller) {
      failure(
        response,
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      );
      return;
    }
    const denial = firstDenial(
      [{ action: `${service}:${operation}`, resources: [resource] }],
      caller.statements,
    );
    if (denial) {
      const answer = deniedResponse(service, denialMessage(denial, { ...caller, account: options.account }));
      response.writeHead(answer.statusCode, answer.headers);
      response.end(answer.body);
      return;
    }
    if (target === 'secretsmanager.GetSecretValue') {
      const value = options.secrets[resource];
      if (value === undefined) {
        failure(response, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
        return;
      }
      json(response, 200, {
        ARN: resource,
        Name: resource.split(':').pop(),
        SecretString: value,
        VersionId: 'local',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 0,
      });
      return;
    }
    const key = material.get(resource);
    if (!key) {
      failure(response, 'NotFoundException', `Key '${resource}' does not exist`);
      return;
    }
    const context = body.EncryptionContext as Record<string, string> | undefined;
    if (target === 'TrentService.Encrypt') {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(aad(context));
      const sealed = Buffer.concat([
        cipher.update(Buffer.from(String(body.Plaintext ?? ''), 'base64')),
        cipher.final(),
      ]);
      const id = Buffer.from(resource, 'utf8');
      const blob = Buffer.concat([Buffer.from([id.length]), id, iv, cipher.getAuthTag(), sealed]);
      json(response, 200, {
        CiphertextBlob: blob.toString('base64'),
        KeyId: resource,
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      });
      return;
    }
    if (target === 'TrentService.Decrypt') {
      const blob = Buffer.from(String(body.CiphertextBlob ?? ''), 'base64');
      const start = 1 + (blob[0] ?? 0);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(start, start + 12));
        decipher.setAAD(aad(context));
        decipher.setAuthTag(blob.subarray(start + 12, start + 28));
        const plaintext = Buffer.concat([decipher.update(blob.subarray(start + 28)), decipher.final()]);
        json(response, 200, {
          Plaintext: plaintext.toString('base64'),
          KeyId: resource,
          EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
        });
      } catch {
        failure(response, 'InvalidCiphertextException', '');
      }
      return;
    }
    failure(response, 'UnknownOperationException', `${target} is not served locally`);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) failure(response, 'InternalFailure', String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
