import { config, configDefaults } from '../../shared/config';
import { visitors } from '../../shared/db/visitors';
import { created, route } from '../../shared/http/route';
import { visitorExample } from '../../shared/schemas/examples';
import { createVisitorBody, visitorBootstrap } from '../../shared/schemas/visitor';

export const createVisitor = route({
  method: 'POST',
  path: '/api/widget/visitors',
  operationId: 'createVisitor',
  summary: 'Bootstrap a widget visitor',
  description: `Authenticated with the public widget key (\`X-Widget-Key: svc_wpk_…\`). Creates a visitor and a visitor token (\`svc_vt_…\`, valid \`VISITOR_TOKEN_TTL_HOURS\`, default ${configDefaults.visitorTokenTtlHours} hours). \`identifier\` defaults to the visitor id.`,
  tag: 'Widget',
  callers: ['widget'],
  body: createVisitorBody,
  response: { status: 201, schema: visitorBootstrap, description: 'The visitor and its token, shown once' },
  examples: {
    request: { identifier: 'ada@example.com', metadata: { plan: 'pro' } },
    response: {
      visitor: visitorExample,
      token: 'svc_vt_9sVx2mB7nC4wE8rT1yU6iO0pA5sD7fG9hJ2kL4zX6cV8bN1mQ3wE5rT7yU9iO3kPq',
      expiresAt: '2026-12-21T10:00:00.000Z',
    },
  },
  handle: async ({ caller, body }) =>
    created(await visitors.createWithToken(caller.orgId, body, config.visitorTokenTtlHours)),
});
