import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * Secrets Manager's `GetSecretValue`, signed here (Signature Version 4) and sent with Node's own
 * https. The functions that need a secret read one or two, once per instance and then every few
 * minutes; the SDK's Secrets Manager client, loaded beside the DynamoDB one, cost their cold import
 * more than the read itself (docs/decisions.md, "Secrets Manager reads stay hand-signed").
 * `test/unit/secrets.test.ts` checks the signature against the SDK's signer and the request against
 * the one the SDK client sends.
 */

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface SecretReadOptions {
  /** Lambda puts the function role's session in the environment; tests pass their own. */
  credentials?: AwsCredentials;
  /** As the SDK: AWS_ENDPOINT_URL_SECRETS_MANAGER, then AWS_ENDPOINT_URL, then the regional endpoint. */
  endpoint?: string;
  /** Per attempt; the whole read happens in the init phase, whose budget is 10 s. */
  timeoutMs?: number;
  /** Attempts in all, as the SDK's standard retry mode: throttling, 5xx and network errors retry. */
  attempts?: number;
  /** Signing time (tests). */
  now?: () => Date;
}

const SERVICE = 'secretsmanager';
const TARGET = 'secretsmanager.GetSecretValue';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
const DEFAULT_TIMEOUT_MS = 3_000;
const DEFAULT_ATTEMPTS = 3;
const BACKOFF_BASE_MS = 100;

/** The string value of a secret (its current version), by ARN or name. */
export async function getSecretString(secretId: string, options: SecretReadOptions = {}): Promise<string> {
  const region = regionOf(secretId);
  const endpoint = new URL(
    options.endpoint ??
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER ??
      process.env.AWS_ENDPOINT_URL ??
      `https://${SERVICE}.${region}.${dnsSuffix(secretId)}`,
  );
  const credentials = options.credentials ?? environmentCredentials();
  const body = JSON.stringify({ SecretId: secretId });
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  for (let attempt = 1; ; attempt += 1) {
    // Signed per attempt: a retry carries its own time.
    const headers = signedHeaders({
      host: endpoint.host,
      body,
      region,
      credentials,
      now: options.now?.() ?? new Date(),
    });
    let outcome: Outcome;
    try {
      outcome = await post(endpoint, headers, body, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    } catch (error) {
      if (attempt >= attempts) throw new Error(`Secrets Manager unreachable: ${(error as Error).message}`);
      await backoff(attempt);
      continue;
    }
    if (outcome.status === 200) return secretStringOf(outcome.body, secretId);
    const failure = serviceError(outcome);
    if (!failure.retryable || attempt >= attempts) throw new Error(`Secrets Manager ${failure.message}`);
    await backoff(attempt);
  }
}

/** The region in the ARN (arn:partition:secretsmanager:region:account:secret:name), else Lambda's. */
function regionOf(secretId: string): string {
  const fromArn = secretId.startsWith('arn:') ? secretId.split(':')[3] : undefined;
  const region = fromArn || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION;
  if (!region) throw new Error('No region to read the secret from: set AWS_REGION');
  return region;
}

function dnsSuffix(secretId: string): string {
  return secretId.startsWith('arn:aws-cn:') ? 'amazonaws.com.cn' : 'amazonaws.com';
}

function environmentCredentials(): AwsCredentials {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = process.env;
  if (!AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY) {
    throw new Error('No AWS credentials in the environment to read a secret with');
  }
  return {
    accessKeyId: AWS_ACCESS_KEY_ID,
    secretAccessKey: AWS_SECRET_ACCESS_KEY,
    sessionToken: AWS_SESSION_TOKEN,
  };
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/**
 * The request's headers with its SigV4 `Authorization`: a POST to `/` with no query, every header
 * below signed (names lower-case and sorted, as the canonical form wants them).
 */
export function signedHeaders(request: {
  host: string;
  body: string;
  region: string;
  credentials: AwsCredentials;
  now: Date;
}): Record<string, string> {
  const { host, body, region, credentials, now } = request;
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    'content-type': CONTENT_TYPE,
    host,
    'x-amz-date': amzDate,
    ...(credentials.sessionToken ? { 'x-amz-security-token': credentials.sessionToken } : {}),
    'x-amz-target': TARGET,
  };
  const names = Object.keys(headers).sort();
  const canonicalRequest = [
    'POST',
    '/',
    '',
    ...names.map((name) => `${name}:${headers[name]}`),
    '',
    names.join(';'),
    sha256Hex(body),
  ].join('\n');
  const scope = `${day}/${region}/${SERVICE}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${credentials.secretAccessKey}`, day);
  for (const part of [region, SERVICE, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return headers;
}

interface Outcome {
  status: number;
  body: string;
}

function post(
  endpoint: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<Outcome> {
  const send = endpoint.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      endpoint,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        timeout: timeoutMs,
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function secretStringOf(text: string, secretId: string): string {
  const answer = JSON.parse(text) as { SecretString?: unknown };
  if (typeof answer.SecretString !== 'string') throw new Error(`The secret ${secretId} has no string value`);
  return answer.SecretString;
}

/** The awsJson error body: `__type` (possibly `namespace#Name`) and `message` or `Message`. */
function serviceError({ status, body }: Outcome): { message: string; retryable: boolean } {
  let type = `HTTP ${status}`;
  let detail = '';
  try {
    const parsed = JSON.parse(body) as { __type?: unknown; message?: unknown; Message?: unknown };
    if (typeof parsed.__type === 'string') type = parsed.__type.split('#').pop() ?? type;
    const text = parsed.message ?? parsed.Message;
    if (typeof text === 'string') detail = text;
  } catch {
    // Not JSON (a proxy's page): the status says what there is to say.
  }
  const retryable = status >= 500 || status === 429 || /Throttl|LimitExceeded/.test(type);
  return { message: detail ? `${type}: ${detail}` : type, retryable };
}

/** Exponential, with full jitter (the SDK's standard mode). */
function backoff(attempt: number): Promise<void> {
  const delay = Math.random() * BACKOFF_BASE_MS * 2 ** (attempt - 1);
  return new Promise((resolve) => setTimeout(resolve, delay));
}
