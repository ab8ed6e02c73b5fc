import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

/**
 * npm run docs:screenshot [-- [out.png] [http://localhost:3000]]
 *
 * Renders GET /api/docs in headless Chromium (Debian's, not a downloaded one), waits for every
 * operation, expands createConversation (request and response examples), runs "Try it out" on
 * GET /api/health, and saves a full-page PNG plus `<out>.operation.png` of the expanded operation.
 * Without a URL it starts the local stack on a free port (no demo seed). Fails on any console
 * error, page error, CSP violation or request to another origin.
 */
const HELP =
  'usage: npm run docs:screenshot -- [out.png (default /tmp/reference.png)] [base URL of a running stack]';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const givenUrl = args.find((arg) => /^https?:\/\//.test(arg));
  const output = args.find((arg) => arg !== givenUrl) ?? '/tmp/reference.png';

  let stop: (() => Promise<void>) | undefined;
  let baseUrl = givenUrl?.replace(/\/+$/, '');
  if (!baseUrl) {
    process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
    const { startLocalStack } = await import('../../infra/local/stack');
    const stack = await startLocalStack({ port: 0, seedDemo: false, runWorkers: false });
    baseUrl = stack.baseUrl;
    stop = stack.stop;
  }

  const userDataDir = await mkdtemp(join(tmpdir(), 'reference-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 1000 },
  });
  const problems: string[] = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    watch(page, new URL(baseUrl).origin, problems);
    const summary = await render(page, baseUrl, output);
    console.log(summary.join('\n'));
  } catch (error) {
    problems.push(`failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await context.close();
    await rm(userDataDir, { recursive: true, force: true });
    await stop?.();
  }
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem(s):\n${problems.map((line) => `  ${line}`).join('\n')}`);
    return 1;
  }
  console.log('no console error, no CSP violation, no request to another origin');
  return 0;
}

/** Console errors and warnings, uncaught errors, CSP violations and requests leaving the origin. */
function watch(page: Page, origin: string, problems: string[]): void {
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`console ${message.type()}: ${message.text().slice(0, 300)}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message.slice(0, 300)}`));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) problems.push(`request to ${url}`);
  });
  page.on('requestfailed', (request) =>
    problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`),
  );
  // Reported through the console listener above, so a violation fails the run. (A string: this
  // project's TypeScript has no DOM types.)
  void page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) =>
      console.error('CSP violation: ' + event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline')));`,
  });
}

type PathItems = Record<string, Record<string, unknown>>;
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const countOperations = (items: PathItems | undefined): number =>
  Object.values(items ?? {}).reduce(
    (total, item) => total + Object.keys(item).filter((key) => METHODS.has(key)).length,
    0,
  );

async function render(page: Page, baseUrl: string, output: string): Promise<string[]> {
  const documentResponse = await fetch(`${baseUrl}/api/openapi.json`);
  const openApi = (await documentResponse.json()) as Record<'paths' | 'webhooks', PathItems | undefined>;
  // Swagger UI renders the operations of `paths` and of OpenAPI 3.1 `webhooks` alike.
  const operations = countOperations(openApi.paths) + countOperations(openApi.webhooks);

  const response = await page.goto(`${baseUrl}/api/docs`);
  if (response?.status() !== 200) throw new Error(`GET /api/docs answered ${response?.status()}`);
  const csp = response.headers()['content-security-policy'];
  // Polled from here: a predicate evaluated in the page would itself need 'unsafe-eval'.
  const deadline = Date.now() + 30_000;
  while ((await page.locator('.opblock').count()) !== operations) {
    if (Date.now() > deadline) throw new Error(`the page did not render the ${operations} operations`);
    await page.waitForTimeout(200);
  }
  const rendered = await page.locator('.opblock').count();

  // Try it out on a public route: the page calls the API on its own origin (connect-src 'self').
  const health = page.locator('.opblock[id$="-getHealth"]');
  await health.locator('.opblock-summary-control').click();
  await health.locator('.try-out__btn').click();
  await health.locator('.execute').click();
  const status = health.locator('.live-responses-table tr.response .response-col_status').first();
  await status.waitFor({ timeout: 10_000 });
  const tryItStatus = (await status.innerText()).trim();
  if (!tryItStatus.startsWith('200')) throw new Error(`Try it out on getHealth answered ${tryItStatus}`);
  await health.locator('.opblock-summary-control').click();

  const create = page.locator('.opblock[id$="-createConversation"]');
  await create.locator('.opblock-summary-control').click();
  await create.locator('.body-param__example, .model-example').first().waitFor();
  await create.locator('.responses-wrapper .highlight-code').first().waitFor();
  await create.scrollIntoViewIfNeeded();
  const operationPng = output.replace(/(\.png)?$/i, '.operation.png');
  await create.screenshot({ path: operationPng });
  await page.screenshot({ path: output, fullPage: true });
  return [
    `page            ${baseUrl}/api/docs`,
    `CSP             ${csp}`,
    `operations      ${rendered} rendered of ${operations} in openapi.json (paths and webhooks)`,
    `try it out      GET /api/health → ${tryItStatus}`,
    `screenshot      ${output}`,
    `operation       ${operationPng} (createConversation expanded)`,
  ];
}

process.exit(await main());
