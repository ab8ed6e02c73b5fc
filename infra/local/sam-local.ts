import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bucketDefinitions, queueDefinitions } from '../../shared/resources';
import { DEFAULT_STATE_FILE, isAlive, readStackState, type StackState } from './stack-state';

/**
 * `npm run sam:prepare`: what `sam local invoke` / `sam local start-api` (Docker) need to run the
 * synthesized functions against a running `npm start`.
 *
 * SAM passes a function only the environment variables its template declares; `--env-vars` can
 * override those, never add others. The deployed template does not declare the local-only ones
 * (AWS_ENDPOINT_URL_*, WEBHOOK_SECRETS_KEY…), so this writes a copy of it that declares them
 * (empty) on every function, next to the original so the asset paths still resolve, and an
 * `--env-vars` file with the running stack's values.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STACK = 'ConversationService';
/** The local stack's default, in the form WEBHOOK_SECRETS_KEY takes (base64 of 32 bytes). */
const DEVELOPMENT_WEBHOOK_KEY = Buffer.from('local-development-webhook-key-32', 'utf8').toString('base64');

/**
 * Declared on every function of the SAM copy (where the template does not already): the variables
 * read locally and absent from the deployed template, and the ones the env file always sets.
 */
const LOCAL_ONLY = [
  'TABLE_NAME',
  // In AWS the functions read the key from Secrets Manager (CURSOR_SIGNING_KEY_SECRET_ARN, emptied below).
  'CURSOR_SIGNING_KEY',
  'PLATFORM_ADMIN_TOKEN_SHA256',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_SESV2',
  'WEBHOOK_SECRETS_KEY',
  'WEBHOOK_ALLOWED_TARGETS',
  'WEBHOOK_RETRY_SCHEDULE',
  'RATE_LIMIT_PER_MINUTE',
  ...queueDefinitions.map((queue) => queue.envVar),
  ...bucketDefinitions.map((bucket) => bucket.envVar),
];

interface Template {
  Resources: Record<
    string,
    {
      Type: string;
      Metadata?: Record<string, unknown>;
      Properties?: { Environment?: { Variables?: Record<string, unknown> } };
    }
  >;
}

/** The template with every local-only variable declared on every function; the function ids. */
export function samTemplate(template: Template): { template: Template; functions: [string, string][] } {
  const copy = structuredClone(template);
  const functions: [string, string][] = [];
  for (const [logicalId, resource] of Object.entries(copy.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const properties = resource.Properties ?? {};
    resource.Properties = properties;
    const variables = { ...properties.Environment?.Variables };
    for (const name of LOCAL_ONLY) variables[name] ??= '';
    properties.Environment = { ...properties.Environment, Variables: variables };
    const path = String(resource.Metadata?.['aws:cdk:path'] ?? logicalId);
    functions.push([logicalId, path.split('/')[1] ?? logicalId]);
  }
  return { template: copy, functions };
}

/** `--env-vars` for every function: the running stack's configuration, endpoints as the container reaches them. */
export function samEnvironment(state: StackState, host: string): Record<string, string> {
  const reachable = (url: string) => url.replace(/\/\/(127\.0\.0\.1|localhost)(?=[:/])/, `//${host}`);
  const env = state.env;
  const values: Record<string, string> = {
    TABLE_NAME: state.tableName,
    PLATFORM_ADMIN_TOKEN_SHA256: createHash('sha256').update(state.platformAdminToken).digest('hex'),
    // The local key, not KMS: the same key `npm start` seals webhook secrets with.
    WEBHOOK_SECRETS_KMS_KEY_ID: '',
    WEBHOOK_SECRETS_KEY: env.WEBHOOK_SECRETS_KEY ?? DEVELOPMENT_WEBHOOK_KEY,
    // The running stack's key, not Secrets Manager: an empty ARN makes the functions use CURSOR_SIGNING_KEY.
    CURSOR_SIGNING_KEY_SECRET_ARN: '',
    REALTIME_ENDPOINT: reachable(env.REALTIME_ENDPOINT ?? state.baseUrl),
  };
  for (const name of [
    'CURSOR_SIGNING_KEY',
    'WEBHOOK_ALLOWED_TARGETS',
    'WEBHOOK_RETRY_SCHEDULE',
    'RATE_LIMIT_PER_MINUTE',
  ]) {
    const value = env[name];
    if (value) values[name] = value;
  }
  for (const name of LOCAL_ONLY) {
    const value = env[name];
    if (value && values[name] === undefined)
      values[name] = name.startsWith('AWS_ENDPOINT_URL_') ? reachable(value) : value;
  }
  return values;
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const at = args.indexOf(name);
    return at >= 0 && args[at + 1] ? (args[at + 1] as string) : fallback;
  };
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`npm run sam:prepare -- [--host 127.0.0.1] [--stack-file .local-data/local-stack.json]

Writes cdk.out/${STACK}.sam.json (the synthesized template with the local-only variables declared)
and cdk.out/sam-env.json (their values from the running \`npm start\`), then prints the SAM commands.
--host: how the Lambda container reaches this machine: 127.0.0.1 with \`--docker-network host\`
(Linux; the emulators listen on loopback only), host.docker.internal with Docker Desktop.
Run \`npm run synth\` first, and keep \`npm start\` running.`);
    return;
  }
  const host = option('--host', '127.0.0.1');
  const stateFile = resolve(option('--stack-file', DEFAULT_STATE_FILE));
  const templateFile = join(ROOT, 'cdk.out', `${STACK}.template.json`);
  if (!existsSync(templateFile))
    throw new Error(`${relative(process.cwd(), templateFile)} is missing: npm run synth`);
  const state = readStackState(stateFile);
  if (!state || !isAlive(state.pid))
    throw new Error('no running `npm start` (start it first, then run this again)');

  const { template, functions } = samTemplate(JSON.parse(readFileSync(templateFile, 'utf8')) as Template);
  const samFile = join(ROOT, 'cdk.out', `${STACK}.sam.json`);
  const envFile = join(ROOT, 'cdk.out', 'sam-env.json');
  writeFileSync(samFile, `${JSON.stringify(template, null, 1)}\n`);
  writeFileSync(envFile, `${JSON.stringify({ Parameters: samEnvironment(state, host) }, null, 2)}\n`, {
    mode: 0o600,
  });

  const network = host === '127.0.0.1' ? ' --docker-network host' : '';
  const common = `-t cdk.out/${STACK}.sam.json --env-vars cdk.out/sam-env.json${network}`;
  const width = Math.max(...functions.map(([, construct]) => construct.length)) + 2;
  console.log(
    [
      `wrote ${relative(process.cwd(), samFile)} and ${relative(process.cwd(), envFile)} (for the stack at ${state.baseUrl})`,
      '',
      'Functions (construct id → logical id; sam accepts either):',
      ...functions.map(([logicalId, construct]) => `  ${construct.padEnd(width)}${logicalId}`),
      '',
      'Examples (Docker needed; the container gets your shell’s AWS credentials, any value works locally):',
      `  npm run -s invoke -- --resolve events/apigw/identity-me.json | sam local invoke ${functions.find(([, c]) => c === 'IdentityFunction')?.[0] ?? 'IdentityFunction'} ${common} --event -`,
      `  sam local start-api ${common} --port 3001`,
    ].join('\n'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    console.error(`sam:prepare: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
