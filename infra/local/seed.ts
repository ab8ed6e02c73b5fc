import { config } from '../../shared/config';
import { credentials } from '../../shared/db/credentials';
import { operators } from '../../shared/db/operators';
import { organizations } from '../../shared/db/organizations';
import { visitors } from '../../shared/db/visitors';

export interface DemoCredentials {
  organizationId: string;
  widgetKey: string;
  apiKey: string;
  adminSession: string;
  adminOperatorId: string;
  visitorToken: string;
  visitorId: string;
}

/** A demo organization with one of each credential, written through the same data layer as the API. */
export async function seedDemo(): Promise<DemoCredentials> {
  const organization = await organizations.create({
    name: 'Demo Organization',
    modules: ['automation_api'],
    locales: ['en'],
    defaultLocale: 'en',
    historyWindowDays: null,
  });
  const key = await credentials.createApiKey(organization.id, {
    name: 'Demo key (unrestricted)',
    scopes: [],
  });
  const admin = await operators.create(organization.id, {
    name: 'Demo Admin',
    email: 'admin@demo.example',
    role: 'admin',
  });
  if (!key || !admin.ok) throw new Error('seeding the demo organization failed');
  const session = await credentials.createOperatorSession(
    organization.id,
    admin.operator.id,
    'admin',
    config.operatorSessionTtlHours,
  );
  const visitor = await visitors.createWithToken(
    organization.id,
    { identifier: 'visitor@demo.example' },
    config.visitorTokenTtlHours,
  );
  return {
    organizationId: organization.id,
    widgetKey: organization.widgetKey,
    apiKey: key.key,
    adminSession: session.token,
    adminOperatorId: admin.operator.id,
    visitorToken: visitor.token,
    visitorId: visitor.visitor.id,
  };
}
