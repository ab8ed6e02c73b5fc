import { RemovalPolicy } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { SecretRead, ServiceFunction } from '../../constructs/service-function';
import { acknowledge } from '../../nag';
import type { StackScope } from './context';

/**
 * The service's secrets and the keys that seal the ones it stores itself: the cursor key ring
 * (rotated by the workers part's rotation function), the Discord bot token, webhook signing
 * secrets and AI provider keys (KMS). Functions read secrets through the secrets extension
 * (`SecretRead`, shared/secrets.ts) and seal or open with KMS through the grants below.
 */
export class Secrets {
  readonly cursorSigningKey: Secret;
  readonly cursorKeys: SecretRead;
  readonly discordToken: SecretRead;
  /** Grants encrypt (`seal`: the webhooks group) or decrypt (`open`: the delivery worker) and names the key. */
  readonly withWebhookSecrets: (fn: ServiceFunction, access: 'seal' | 'open') => void;
  /** Grants encrypt and decrypt on the AI provider keys' key and names it (the admin group). */
  readonly withAiProviderKeys: (fn: ServiceFunction) => void;

  constructor(stack: StackScope) {
    // Read by the functions that sign cursors before their first request (shared/cursor-keys.ts), never put in
    // their environment: a JSON ring { current, next, previous } once rotated (a plain key until
    // then), so a rotation never invalidates a cursor in flight.
    const cursorSigningKey = new Secret(stack, 'CursorSigningKey', {
      description:
        'HMAC key ring of pagination cursors (JSON {current,next,previous}; a plain key before the first rotation), rotated every 30 days',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    const cursorKeysSecret: SecretRead = { secret: cursorSigningKey, env: 'CURSOR_SIGNING_KEY_SECRET_ARN' };
    // Webhook signing secrets are encrypted with KMS (organization as encryption context): only the
    // API function that creates and rotates them may encrypt, only the delivery worker may decrypt.
    const webhookSecretsKey = new Key(stack, 'WebhookSecretsKey', {
      description: 'Encrypts webhook signing secrets at rest',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const withWebhookSecrets = (fn: ServiceFunction, access: 'seal' | 'open') => {
      fn.addEnvironment('WEBHOOK_SECRETS_KMS_KEY_ID', webhookSecretsKey.keyArn);
      if (access === 'seal') {
        webhookSecretsKey.grantEncrypt(fn);
        const grant =
          "CDK's KMS encrypt grant (kms:Encrypt, kms:ReEncrypt*, kms:GenerateDataKey*) on the one webhook-secrets key; the function only calls Encrypt.";
        acknowledge(fn, {
          'AwsSolutions-IAM5[Action::kms:ReEncrypt*]': grant,
          'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]': grant,
        });
      } else webhookSecretsKey.grantDecrypt(fn);
    };
    // AI provider API keys: sealed and opened only by the platform admin's function, under their
    // own key (the provider id as encryption context), so no other function can read them.
    const aiProviderKeysKey = new Key(stack, 'AiProviderKeysKey', {
      description: 'Encrypts the API keys of platform AI providers at rest',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const withAiProviderKeys = (fn: ServiceFunction) => {
      fn.addEnvironment('AI_PROVIDER_KEYS_KMS_KEY_ID', aiProviderKeysKey.keyArn);
      aiProviderKeysKey.grantEncryptDecrypt(fn);
      const grant =
        "CDK's KMS encrypt/decrypt grant (kms:ReEncrypt*, kms:GenerateDataKey* with Encrypt and Decrypt) on the one AI-provider-keys key; the function only calls Encrypt and Decrypt.";
      acknowledge(fn, {
        'AwsSolutions-IAM5[Action::kms:ReEncrypt*]': grant,
        'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]': grant,
      });
    };
    // The Discord bot token: issued by Discord, so its value is put here by an operator after the
    // first deploy (docs/operations.md); functions read it at run time, never from their environment.
    const discordBotToken = new Secret(stack, 'DiscordBotToken', {
      description:
        'Discord bot token (the value after "Bot "), put here after deploying; read by the functions that call Discord',
    });
    acknowledge(discordBotToken, {
      'AwsSolutions-SMG4':
        'A Discord bot token is issued and rotated in Discord’s developer portal, not by a rotation function: an operator puts the new value here (docs/operations.md, Discord).',
    });
    const discordTokenSecret: SecretRead = { secret: discordBotToken, env: 'DISCORD_BOT_TOKEN_SECRET_ARN' };

    this.cursorSigningKey = cursorSigningKey;
    this.cursorKeys = cursorKeysSecret;
    this.discordToken = discordTokenSecret;
    this.withWebhookSecrets = withWebhookSecrets;
    this.withAiProviderKeys = withAiProviderKeys;
  }
}
