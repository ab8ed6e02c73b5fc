import type { IncomingMessage } from 'node:http';

/**
 * Secrets Manager's `GetSecretValue` through the AWS Parameters and Secrets Lambda Extension: a
 * layer on the functions that read a secret (infra/constructs/service-function.ts, `secrets`), which
 * answers on loopback and makes the signed call itself. No SDK client and no signing code in the
 * bundle (docs/decisions.md). Locally the same request reaches the local stack's stand-in of the
 * extension (infra/local/key-service.ts), which serves the local secrets to the functions whose
 * template policy allows `secretsmanager:GetSecretValue` on them.
 *
 * The extension caches each secret for `SECRET_CACHE_SECONDS` (its `SECRETS_MANAGER_TTL`, set by
 * CDK from this constant): a new value reaches a warm instance within that, plus whatever a caller
 * keeps on its own (the cursor key ring, the Discord token: both say so).
 *
 * Lambda answers on this port only while a function is invoked, never in its init phase: read
 * secrets on first use (see `beforeFirstInvoke` in shared/invoke-ready.ts), not at module load.
 */

/** Not an ES import: on Node 22 that loads undici at module load (docs/decisions.md, "node:http and ICU at import"). */
const { get } = process.getBuiltinModule('node:http');

/** The extension's cache lifetime (its maximum; AWS's default). */
export const SECRET_CACHE_SECONDS = 300;

/** The extension's port unless PARAMETERS_SECRETS_EXTENSION_HTTP_PORT says otherwise. */
const DEFAULT_PORT = 2773;
const TIMEOUT_MS = 5_000;

export interface SecretReadOptions {
  /** Per request: the extension itself waits for Secrets Manager (SECRETS_MANAGER_TIMEOUT_MILLIS). */
  timeoutMs?: number;
}

/** The string value of a secret (its current version), by ARN or name. */
export async function getSecretString(secretId: string, options: SecretReadOptions = {}): Promise<string> {
  const token = process.env.AWS_SESSION_TOKEN;
  if (!token) throw new Error('No AWS_SESSION_TOKEN to authenticate to the secrets extension with');
  const port = Number(process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT) || DEFAULT_PORT;
  const { status, body } = await request(
    `http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`,
    token,
    options.timeoutMs ?? TIMEOUT_MS,
  );
  if (status !== 200) throw new Error(`Secret ${secretId} not read (HTTP ${status}): ${body.trim()}`);
  const answer = JSON.parse(body) as { SecretString?: unknown };
  if (typeof answer.SecretString !== 'string') throw new Error(`The secret ${secretId} has no string value`);
  return answer.SecretString;
}

function request(url: string, token: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = get(
      url,
      { headers: { 'X-Aws-Parameters-Secrets-Token': token }, timeout: timeoutMs },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.on('timeout', () =>
      outgoing.destroy(new Error(`the secrets extension did not answer within ${timeoutMs} ms`)),
    );
    outgoing.on('error', (error) => reject(new Error(`Secrets extension unreachable: ${error.message}`)));
  });
}
