import { config } from '../config';
import { getSecretString } from '../secrets';

/** How long a token read from Secrets Manager is used before it is read again. */
const TOKEN_MAX_AGE_MS = 300_000;

let cached: { token: Promise<string>; readAt: number } | undefined;

/**
 * The Discord bot token. In AWS it sits in Secrets Manager (DISCORD_BOT_TOKEN_SECRET_ARN), read on
 * first use and kept for five minutes (a replaced token is picked up within that); concurrent
 * callers share one read, and a failed read is not kept. Locally it is DISCORD_BOT_TOKEN. Empty
 * when neither is configured: Discord then refuses the call, which the callers report as its failure.
 */
export async function discordBotToken(): Promise<string> {
  const arn = config.discordBotTokenSecretArn;
  if (!arn) return config.discordBotToken;
  const now = Date.now();
  if (!cached || now - cached.readAt > TOKEN_MAX_AGE_MS) {
    const read = { token: getSecretString(arn).then((value) => value.trim()), readAt: now };
    read.token.catch(() => {
      if (cached === read) cached = undefined;
    });
    cached = read;
  }
  return cached.token;
}
