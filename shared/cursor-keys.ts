import { config } from './config';
import { type CursorKeyRing, parseCursorKeyRing } from './cursor-key-ring';
import { logger } from './logger';
import { getSecretString } from './secrets';

/** How long a ring read from Secrets Manager is used before it is read again (in the background). */
export const CURSOR_KEYS_REFRESH_SECONDS = 300;

export interface CursorKeySourceOptions {
  /** In AWS: the secret holding the key ring (JSON) or a plain key. */
  secretArn?: string | undefined;
  /** Locally: the key itself (CURSOR_SIGNING_KEY). */
  localKey?: string | undefined;
  refreshSeconds?: number;
  /** Reads the secret's string value; Secrets Manager's GetSecretValue unless a test passes its own. */
  readSecret?: (secretId: string) => Promise<string>;
}

/**
 * Where cursors find their keys, synchronously: `create` reads the ring once (at cold start: see
 * below), `keys()` answers from memory. Past `refreshSeconds` a read starts in the background and
 * the ring in hand serves meanwhile, so a warm instance picks up a rotation within minutes without
 * ever waiting for Secrets Manager on a request; a failed read keeps the old ring (and is logged).
 * A rotation announces the next key a whole period ahead (cursor-key-ring.ts), so a ring a few
 * minutes old still accepts every cursor a fresher instance signs.
 */
export class CursorKeySource {
  private refreshing: Promise<void> | undefined;

  private constructor(
    private ring: CursorKeyRing,
    private loadedAt: number,
    private readonly options: Required<Pick<CursorKeySourceOptions, 'refreshSeconds'>> &
      CursorKeySourceOptions,
  ) {}

  static async create(options: CursorKeySourceOptions): Promise<CursorKeySource> {
    const settings = { refreshSeconds: CURSOR_KEYS_REFRESH_SECONDS, ...options };
    if (!settings.secretArn) {
      if (!settings.localKey) throw new Error('No cursor signing key: set CURSOR_SIGNING_KEY_SECRET_ARN');
      return new CursorKeySource(parseCursorKeyRing(settings.localKey), Date.now(), settings);
    }
    return new CursorKeySource(await read(settings), Date.now(), settings);
  }

  /** The ring to sign and verify with now. */
  keys(): CursorKeyRing {
    const { secretArn, refreshSeconds } = this.options;
    if (secretArn && !this.refreshing && Date.now() - this.loadedAt > refreshSeconds * 1000) {
      this.refreshing = read(this.options)
        .then((ring) => {
          this.ring = ring;
          this.loadedAt = Date.now();
        })
        .catch((error: unknown) => {
          // Try again on a later request, not on every one of them.
          this.loadedAt = Date.now();
          logger.warn('cursor key ring not refreshed; the one in hand is kept', { error: error as Error });
        })
        .finally(() => {
          this.refreshing = undefined;
        });
    }
    return this.ring;
  }

  /** Resolves once no background read is under way. */
  async settled(): Promise<void> {
    await this.refreshing;
  }
}

async function read({
  secretArn,
  readSecret = getSecretString,
}: CursorKeySourceOptions): Promise<CursorKeyRing> {
  if (!secretArn) throw new Error('No secret to read the cursor key ring from');
  return parseCursorKeyRing(await readSecret(secretArn));
}

/**
 * The instance's key source, read once while the module loads: top-level await, so in Lambda the
 * read happens during init (before the first request, in the init phase's budget), only in bundles
 * that sign or read cursors. Locally it is the CURSOR_SIGNING_KEY variable, with no I/O.
 */
export const cursorKeys = await CursorKeySource.create({
  secretArn: config.cursorSigningKeySecretArn,
  localKey: config.cursorSigningKey,
});
