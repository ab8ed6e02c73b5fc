import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

export const projectRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * Bundles are written under the project's node_modules so that Node's resolution of the external
 * `@aws-sdk/*` packages finds /work/main/node_modules, exactly as the Lambda runtime finds its SDK.
 */
export const benchCacheRoot = join(projectRoot, 'node_modules', '.cache', 'bench');

/** The same banner as infra/constructs/service-function.ts: an ESM bundle has no `require` of its own. */
export const REQUIRE_BANNER =
  "import { createRequire as __bannerCreateRequire } from 'module'; const require = __bannerCreateRequire(import.meta.url);";

/**
 * What CDK's NodejsFunction passes to esbuild for every ServiceFunction (see
 * infra/constructs/service-function.ts): bundle, platform node, ESM, node22, minify, no source map,
 * `@aws-sdk/*` left to the runtime, `module` before `main`, and the createRequire banner.
 */
export const cdkBuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: false,
  external: ['@aws-sdk/*'],
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_BANNER },
  logLevel: 'warning',
} satisfies BuildOptions;

/**
 * Cheap drift check: the options above are a copy (importing the construct would load aws-cdk-lib),
 * so warn when the construct's source no longer says the same thing.
 */
export function cdkOptionsDrift(): string[] {
  let source: string;
  try {
    source = readFileSync(join(projectRoot, 'infra/constructs/service-function.ts'), 'utf8');
  } catch {
    return ['infra/constructs/service-function.ts not found'];
  }
  const expected: [string, string][] = [
    ['minify: true', 'minify'],
    ['format: OutputFormat.ESM', 'ESM format'],
    ["target: 'node22'", 'node22 target'],
    ["externalModules: ['@aws-sdk/*']", '@aws-sdk/* external'],
    ["mainFields: ['module', 'main']", 'mainFields'],
    [REQUIRE_BANNER, 'createRequire banner'],
  ];
  return expected.filter(([text]) => !source.includes(text)).map(([, what]) => what);
}

/**
 * Environment of a freshly started function: what CDK binds (table name) plus the secrets config
 * requires when AWS_LAMBDA_FUNCTION_NAME says "deployed" (so a missing variable fails the import, as
 * it would in Lambda), fake credentials, and no instance-metadata lookups.
 */
export const functionEnv: Record<string, string> = {
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_EC2_METADATA_DISABLED: 'true',
  TABLE_NAME: 'bench-table',
  CURSOR_SIGNING_KEY: 'bench-cursor-signing-key',
  PLATFORM_ADMIN_TOKEN_SHA256: '0'.repeat(64),
  // The stack binds it from Secrets Manager (64 random characters); without it the webhooks
  // function refuses to load in Lambda.
  WEBHOOK_SECRETS_KEY: 'bench-webhook-secrets-key-0123456789abcdefghijklmnopqrstuvwxyzABCD',
  POWERTOOLS_LOG_LEVEL: 'WARN',
  // The SDK's "Node < 22" notice: Lambda runs node22, so it is not part of a real cold start.
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** `npm run bench -- [options]`. */
export interface BenchArgs {
  help: boolean;
  /** Message counts of phase 7 (the 100,000 reference is always among them); empty: phase skipped. */
  exportVolumes: number[];
  /** Messages of phase 8's search tenant (a tenth as many conversations); 0: phase skipped. */
  searchMessages: number;
  /** Phase 9: a merge of 1,000 conversations and an erasure of 10,000 messages (issue 27). */
  contactVolume: boolean;
}

export const BENCH_USAGE = `Usage: npm run bench -- [options]

Measures bundle sizes, cold imports, the warm chain, DynamoDB round trips and capacity units,
webhook delivery, contention and export volume on this machine; exits 0 whatever it measures
(misses are marked ✗).

Options:
  --export-volume=<n>[,<n>…]  phase 7 also exports these message counts (e.g. 1000000), besides the
                              100,000 it always measures; seeding runs at ~2,000 messages/s on
                              2 cores (1,000,000: ~8 minutes, then four exports of ~1 minute)
  --no-export-volume          skip phase 7 (export volume; ~1.5–2 minutes at 100,000 messages)
  --search-volume=<n>         phase 8 (search) seeds a tenant of <n> messages in n/10 conversations
                              (default 20000, 1–2 minutes; the issue's reference is 1000000:
                              or standalone, npx tsx bench/search-main.ts --messages=1000000 --report)
  --no-search                 skip phase 8 (search: index lag, query latency, write cost, rebuild)
  --no-contact-volume         skip phase 9 (a visitor merge of 1,000 conversations and an erasure
                              of 10,000 messages, in-process; ~1–2 minutes)
  --help                      this text`;

export function parseBenchArgs(argv: readonly string[]): BenchArgs | { error: string } {
  const args: BenchArgs = {
    help: false,
    exportVolumes: [100_000],
    searchMessages: 20_000,
    contactVolume: true,
  };
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') args.help = true;
    else if (arg === '--no-export-volume') args.exportVolumes = [];
    else if (arg === '--export-volume') args.exportVolumes = [100_000];
    else if (arg.startsWith('--export-volume=')) {
      const sizes = arg
        .slice('--export-volume='.length)
        .split(',')
        .map((part) => Number(part.replaceAll('_', '').trim()));
      if (sizes.some((size) => !Number.isInteger(size) || size < 10_000 || size > 10_000_000))
        return { error: `${arg}: message counts are whole numbers from 10000 to 10000000` };
      args.exportVolumes = [...new Set([100_000, ...sizes])].sort((a, b) => a - b);
    } else if (arg === '--no-search') args.searchMessages = 0;
    else if (arg === '--no-contact-volume') args.contactVolume = false;
    else if (arg.startsWith('--search-volume=')) {
      const size = Number(arg.slice('--search-volume='.length).replaceAll('_', '').trim());
      if (!Number.isInteger(size) || size < 1_000 || size > 10_000_000)
        return { error: `${arg}: a whole number of messages from 1000 to 10000000` };
      args.searchMessages = size;
    } else return { error: `unknown option ${arg}` };
  }
  return args;
}
