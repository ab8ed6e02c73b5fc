import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { ServiceStack } from './stacks/service-stack';

const app = new App();
// Both cdk-nag packs on every synth: a finding fails it (cdk.out/validation-report.json); the ones
// we accept are acknowledged in code with their reason (infra/nag.ts).
Validations.of(app).addPlugins(new AwsSolutionsChecks(), new ServerlessChecks());
const positiveInt = (key: string): number | undefined => {
  const value = Number(app.node.tryGetContext(key));
  return Number.isInteger(value) && value > 0 ? value : undefined;
};

/** `-c reservedConcurrency=false` (reserve none) or `-c 'reservedConcurrency={"conversations":30}'`. */
const reservedConcurrency = (): false | Record<string, number> | undefined => {
  const raw: unknown = app.node.tryGetContext('reservedConcurrency');
  if (raw === undefined) return undefined;
  if (raw === false || raw === 'false') return false;
  const parsed: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
  if (typeof parsed !== 'object' || parsed === null)
    throw new Error('reservedConcurrency: false or a JSON object');
  return parsed as Record<string, number>;
};

new ServiceStack(app, 'ConversationService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  // Optional overrides (`cdk synth -c rateLimitPerMinute=600`); functions fall back to config defaults.
  rateLimitPerMinute: positiveInt('rateLimitPerMinute'),
  authCacheTtlMs: positiveInt('authCacheTtlMs'),
  reservedConcurrency: reservedConcurrency(),
});
