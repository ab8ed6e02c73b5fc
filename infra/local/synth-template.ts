import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { App, Aspects, type IAspect, type Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { ServiceStack } from '../stacks/service-stack';

/**
 * Renders the service's CloudFormation template as `cdk synth` would (the same stack, without
 * bundling or asset staging: only the template is wanted) and writes it to the file given as the
 * argument. Run in a child process by `infra/local/template.ts`, which caches the result.
 */
const out = process.argv[2];
if (!out) throw new Error('usage: synth-template.ts <out.json>');
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
// Route alarms live in a nested stack the functions know nothing of.
const stack = new ServiceStack(app, 'ConversationService', { routeAlarms: false });
// Aspects (tags above all) as synthesis applies them, each to its construct and everything below.
const visit = (construct: IConstruct, inherited: readonly IAspect[]) => {
  const aspects = [...inherited, ...Aspects.of(construct).all];
  for (const aspect of aspects) aspect.visit(construct);
  for (const child of construct.node.children) visit(child, aspects);
};
visit(app, []);
// The template alone: app.synth() would also stage every function's assets (seconds more).
const template = (stack as unknown as { _toCloudFormation(): unknown })._toCloudFormation() as Parameters<
  Stack['resolve']
>[0];
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.${process.pid}.tmp`, JSON.stringify(template));
renameSync(`${out}.${process.pid}.tmp`, out);
