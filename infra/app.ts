import { App } from 'aws-cdk-lib';
import { ServiceStack } from './stacks/service-stack';

const app = new App();
const positiveInt = (key: string): number | undefined => {
  const value = Number(app.node.tryGetContext(key));
  return Number.isInteger(value) && value > 0 ? value : undefined;
};

new ServiceStack(app, 'ConversationService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  // Optional overrides (`cdk synth -c rateLimitPerMinute=600`); functions fall back to config defaults.
  rateLimitPerMinute: positiveInt('rateLimitPerMinute'),
  authCacheTtlMs: positiveInt('authCacheTtlMs'),
});
