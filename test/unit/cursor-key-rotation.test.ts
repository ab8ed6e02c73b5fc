import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler, type RotationEvent } from '../../functions/rotation/cursor-signing-key';
import { MIN_KEY_LENGTH, parseCursorKeyRing, verificationKeys } from '../../shared/cursor-key-ring';

const secretsManager = mockClient(SecretsManagerClient);
const SecretId = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf';
const token = 'b3b8ba3c-0000-4000-8000-000000000001';
const old = 'o'.repeat(64);
const event = (Step: RotationEvent['Step']): RotationEvent => ({ SecretId, ClientRequestToken: token, Step });

/** The secret's versions: the current one, and the pending one this rotation is about. */
function secret(stages: Record<string, string[]> = { current: ['AWSCURRENT'], [token]: ['AWSPENDING'] }) {
  secretsManager.on(DescribeSecretCommand).resolves({ RotationEnabled: true, VersionIdsToStages: stages });
}
const notFound = Object.assign(new Error('no pending version'), { name: 'ResourceNotFoundException' });

describe('cursor signing key rotation', () => {
  beforeEach(() => secretsManager.reset());

  it('createSecret: puts the current ring rotated one step as the pending version', async () => {
    // Prepare: a plain-string secret (the format before rings).
    secret();
    secretsManager
      .on(GetSecretValueCommand, { VersionStage: 'AWSPENDING' })
      .rejects(notFound)
      .on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' })
      .resolves({ SecretString: old });

    // Act
    await handler(event('createSecret'));

    // Assess: the signing key is unchanged, a fresh next key is announced.
    const [put] = secretsManager.commandCalls(PutSecretValueCommand);
    expect(put?.args[0].input).toMatchObject({
      SecretId,
      ClientRequestToken: token,
      VersionStages: ['AWSPENDING'],
    });
    const ring = parseCursorKeyRing(put?.args[0].input.SecretString ?? '');
    expect(ring.current).toBe(old);
    expect(ring.next?.length).toBeGreaterThanOrEqual(MIN_KEY_LENGTH);
  });

  it('createSecret: a second call for the same token changes nothing', async () => {
    secret();
    secretsManager.on(GetSecretValueCommand, { VersionStage: 'AWSPENDING' }).resolves({ SecretString: '{}' });
    await handler(event('createSecret'));
    expect(secretsManager.commandCalls(PutSecretValueCommand)).toHaveLength(0);
  });

  it('testSecret: refuses a pending ring that would reject cursors signed now', async () => {
    secret();
    const unrelated = JSON.stringify({ current: 'x'.repeat(64), next: 'y'.repeat(64) });
    secretsManager
      .on(GetSecretValueCommand, { VersionStage: 'AWSPENDING' })
      .resolves({ SecretString: unrelated })
      .on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' })
      .resolves({ SecretString: old });
    await expect(handler(event('testSecret'))).rejects.toThrow(/refuse cursors signed now/);

    const rotated = JSON.stringify({ current: old, next: 'n'.repeat(64) });
    secretsManager
      .on(GetSecretValueCommand, { VersionStage: 'AWSPENDING' })
      .resolves({ SecretString: rotated });
    await expect(handler(event('testSecret'))).resolves.toBeUndefined();
    expect(verificationKeys(parseCursorKeyRing(rotated))).toContain(old);
  });

  it('finishSecret: moves AWSCURRENT to the pending version', async () => {
    secret();
    await handler(event('finishSecret'));
    expect(secretsManager.commandCalls(UpdateSecretVersionStageCommand)[0]?.args[0].input).toEqual({
      SecretId,
      VersionStage: 'AWSCURRENT',
      MoveToVersionId: token,
      RemoveFromVersionId: 'current',
    });
  });

  it('does nothing for a version already current, and refuses what is not a pending version', async () => {
    secret({ [token]: ['AWSCURRENT'] });
    await handler(event('finishSecret'));
    expect(secretsManager.commandCalls(UpdateSecretVersionStageCommand)).toHaveLength(0);

    secret({ current: ['AWSCURRENT'] });
    await expect(handler(event('createSecret'))).rejects.toThrow(/not a version/);
    secret({ current: ['AWSCURRENT'], [token]: ['AWSPREVIOUS'] });
    await expect(handler(event('createSecret'))).rejects.toThrow(/not pending/);
    secretsManager.on(DescribeSecretCommand).resolves({ RotationEnabled: false });
    await expect(handler(event('createSecret'))).rejects.toThrow(/not enabled/);
  });
});
