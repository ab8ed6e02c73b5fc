import { config } from './config';
import { type CursorKeyRing, parseCursorKeyRing } from './cursor-key-ring';
import { beforeFirstInvoke } from './invoke-ready';
import { logger } from './logger';
import { getSecretString } from './secrets';

/**
 * How long a ring read from Secrets Manager is used before it is read again (in the background). The
 * secrets extension caches it as long again (SECRET_CACHE_SECONDS), so a rotated ring is in use
 * within ten minutes; a rotation announces its next key a whole period ahead (cursor-key-ring.ts).
 */
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
 * Where cursors find their keys, synchronously: the ring is read once before the first request
 * (`load`; in Lambda the secrets extension answers only during invocations), then `keys()` answers
 * from memory. Past `refreshSeconds` a read starts in the background and the ring in hand serves
 * meanwhile, so a warm instance picks up a rotation within minutes without ever waiting for Secrets
 * Manager on a request; a failed read keeps the old ring (and is logged).
 */
export class CursorKeySource {
  private refreshing: Promise<void> | undefined;
  private loading: Promise<void> | undefined;

  private constructor(
    private ring: CursorKeyRing | undefined,
    private loadedAt: number,
    private readonly options: Required<Pick<CursorKeySourceOptions, 'refreshSeconds'>> &
      CursorKeySourceOptions,
  ) {}

  /** A source whose ring is the local key (ready at once) or the secret's, read by `load()`. */
  static unloaded(options: CursorKeySourceOptions): CursorKeySource {
    const settings = { refreshSeconds: CURSOR_KEYS_REFRESH_SECONDS, ...options };
    if (!settings.secretArn) {
      if (!settings.localKey) throw new Error('No cursor signing key: set CURSOR_SIGNING_KEY_SECRET_ARN');
      return new CursorKeySource(parseCursorKeyRing(settings.localKey), Date.now(), settings);
    }
    return new CursorKeySource(undefined, 0, settings);
  }

  /** A source with its ring read. */
  static async create(options: CursorKeySourceOptions): Promise<CursorKeySource> {
    const source = CursorKeySource.unloaded(options);
    await source.load();
    return source;
  }

  /** Reads the ring unless it is in hand; concurrent callers share the read, a failed one is retried. */
  async load(): Promise<void> {
    if (this.ring) return;
    this.loading ??= read(this.options).then(
      (ring) => {
        this.ring = ring;
        this.loadedAt = Date.now();
      },
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    await this.loading;
  }

  /** The ring to sign and verify with now. */
  keys(): CursorKeyRing {
    const { secretArn, refreshSeconds } = this.options;
    if (!this.ring) throw new Error('The cursor key ring is not loaded yet (CursorKeySource.load)');
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
 * The instance's key source, only in bundles that sign or read cursors: in Lambda the ring is read
 * at the first request (the API stack awaits it before any route runs). Locally the same, from the
 * local stack's stand-in of the secrets extension; in unit tests the CURSOR_SIGNING_KEY variable,
 * with no I/O.
 */
export const cursorKeys = CursorKeySource.unloaded({
  secretArn: config.cursorSigningKeySecretArn,
  localKey: config.cursorSigningKey,
});
beforeFirstInvoke(() => cursorKeys.load());
