import { config } from '../config';

/** How long a token read from Secrets Manager is used before it is read again. */
const TOKEN_MAX_AGE_SECONDS = 300;

let provider: Promise<{ get(name: string, options: { maxAge: number }): Promise<unknown> }> | undefined;

/**
 * The Discord bot token. In AWS it sits in Secrets Manager (DISCORD_BOT_TOKEN_SECRET_ARN), read on
 * first use and cached for five minutes (a replaced token is picked up within that); the provider is
 * loaded only by the functions that talk to Discord. Locally it is DISCORD_BOT_TOKEN. Empty when
 * neither is configured: Discord then refuses the call, which the callers report as its failure.
 */
export async function discordBotToken(): Promise<string> {
  const arn = config.discordBotTokenSecretArn;
  if (!arn) return config.discordBotToken;
  provider ??= import('@aws-lambda-powertools/parameters/secrets').then(
    ({ SecretsProvider }) => new SecretsProvider(),
  );
  const value = await (await provider).get(arn, { maxAge: TOKEN_MAX_AGE_SECONDS });
  if (typeof value !== 'string') throw new Error('The Discord bot token secret has no string value');
  return value.trim();
}
