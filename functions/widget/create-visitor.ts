import { config } from '../../shared/config';
import { visitors } from '../../shared/db/visitors';
import { created, route } from '../../shared/http/route';
import { createVisitorBody, visitorBootstrap } from '../../shared/schemas/visitor';

export const createVisitor = route({
  method: 'POST',
  path: '/api/widget/visitors',
  operationId: 'createVisitor',
  summary: 'Bootstrap a widget visitor',
  description: `Authenticated with the public widget key (\`X-Widget-Key: svc_wpk_…\`). Creates a visitor and a visitor token (\`svc_vt_…\`, valid ${config.visitorTokenTtlHours} hours). \`identifier\` defaults to the visitor id.`,
  tag: 'Widget',
  callers: ['widget'],
  body: createVisitorBody,
  response: { status: 201, schema: visitorBootstrap, description: 'The visitor and its token, shown once' },
  handle: async ({ caller, body }) =>
    created(await visitors.createWithToken(caller.orgId, body, config.visitorTokenTtlHours)),
});
