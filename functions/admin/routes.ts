import { createApiKey, createOperator, createOperatorSession, revokeApiKey } from './credentials';
import { createOrganization, getOrganization, updateOrganization } from './organizations';

export const adminRoutes = [
  createOrganization,
  getOrganization,
  updateOrganization,
  createApiKey,
  revokeApiKey,
  createOperator,
  createOperatorSession,
];
