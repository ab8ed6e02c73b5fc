import {
  createAiProvider,
  deleteAiProvider,
  getAiProvider,
  listAiProviders,
  testAiProvider,
  updateAiProvider,
} from './ai-providers';
import { createApiKey, createOperator, createOperatorSession, revokeApiKey } from './credentials';
import { impersonateOperator, stopImpersonation } from './impersonation';
import { createOrganization, getOrganization, updateOrganization } from './organizations';

export const adminRoutes = [
  createOrganization,
  getOrganization,
  updateOrganization,
  createApiKey,
  revokeApiKey,
  createOperator,
  createOperatorSession,
  impersonateOperator,
  stopImpersonation,
  createAiProvider,
  listAiProviders,
  getAiProvider,
  updateAiProvider,
  deleteAiProvider,
  testAiProvider,
];
