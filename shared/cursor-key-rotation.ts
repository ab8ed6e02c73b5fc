import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { freshCursorKey, parseCursorKeyRing, rotateCursorKeyRing, verificationKeys } from './cursor-key-ring';
import { logger } from './logger';
import { traced } from './tracing';

/** What Secrets Manager sends a rotation function, once per step. */
export interface RotationEvent {
  SecretId: string;
  ClientRequestToken: string;
  Step: 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';
}

let client: SecretsManagerClient | undefined;
const secretsManager = () => {
  client ??= traced(new SecretsManagerClient({}));
  return client;
};

const isNotFound = (error: unknown) => (error as { name?: string }).name === 'ResourceNotFoundException';

/** createSecret: the pending version is the current ring rotated one step (idempotent per token). */
async function createSecret(secretId: string, token: string): Promise<void> {
  try {
    await secretsManager().send(
      new GetSecretValueCommand({ SecretId: secretId, VersionId: token, VersionStage: 'AWSPENDING' }),
    );
    return;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const current = await secretsManager().send(
    new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
  );
  const ring = rotateCursorKeyRing(parseCursorKeyRing(current.SecretString ?? ''), freshCursorKey);
  await secretsManager().send(
    new PutSecretValueCommand({
      SecretId: secretId,
      ClientRequestToken: token,
      SecretString: JSON.stringify(ring),
      VersionStages: ['AWSPENDING'],
    }),
  );
}

/** testSecret: the pending ring parses, and still accepts what the current one signs. */
async function testSecret(secretId: string, token: string): Promise<void> {
  const [pending, current] = await Promise.all([
    secretsManager().send(
      new GetSecretValueCommand({ SecretId: secretId, VersionId: token, VersionStage: 'AWSPENDING' }),
    ),
    secretsManager().send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' })),
  ]);
  const next = parseCursorKeyRing(pending.SecretString ?? '');
  const now = parseCursorKeyRing(current.SecretString ?? '');
  if (!next.next) throw new Error('The pending cursor key ring announces no next key');
  if (!verificationKeys(next).includes(now.current)) {
    throw new Error('The pending cursor key ring would refuse cursors signed now');
  }
}

/** finishSecret: the pending version becomes current (the old one becomes AWSPREVIOUS). */
async function finishSecret(
  secretId: string,
  token: string,
  versions: Record<string, string[]>,
): Promise<void> {
  const currentVersion = Object.entries(versions).find(([, stages]) => stages.includes('AWSCURRENT'))?.[0];
  if (currentVersion === token) return;
  await secretsManager().send(
    new UpdateSecretVersionStageCommand({
      SecretId: secretId,
      VersionStage: 'AWSCURRENT',
      MoveToVersionId: token,
      ...(currentVersion && { RemoveFromVersionId: currentVersion }),
    }),
  );
}

/**
 * One step of a Secrets Manager rotation of the cursor signing key ring (shared/cursor-key-ring.ts).
 * A custom rotation rather than a hosted one: hosted rotations exist only for database credentials
 * (they log in and change a password); this secret is a key ring that nothing else holds, so
 * setSecret has nothing to do and the other steps are a few lines.
 */
export async function rotateCursorSigningKey(event: RotationEvent): Promise<void> {
  const { SecretId: secretId, ClientRequestToken: token, Step: step } = event;
  const described = await secretsManager().send(new DescribeSecretCommand({ SecretId: secretId }));
  if (!described.RotationEnabled) throw new Error(`Rotation is not enabled for ${secretId}`);
  const versions = described.VersionIdsToStages ?? {};
  const stages = versions[token];
  if (!stages) throw new Error(`Version ${token} is not a version of ${secretId}`);
  if (stages.includes('AWSCURRENT')) {
    logger.info('cursor key rotation: already current', { step, token });
    return;
  }
  if (!stages.includes('AWSPENDING')) throw new Error(`Version ${token} is not pending rotation`);
  switch (step) {
    case 'createSecret':
      await createSecret(secretId, token);
      break;
    case 'setSecret':
      // No other system holds the key.
      break;
    case 'testSecret':
      await testSecret(secretId, token);
      break;
    case 'finishSecret':
      await finishSecret(secretId, token, versions);
      break;
    default:
      throw new Error(`Unknown rotation step ${String(step)}`);
  }
  logger.info('cursor key rotation', { step, token });
}
