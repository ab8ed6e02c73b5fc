import { getHealth, getOpenApi, getReference } from './service-documents';

export const platformRoutes = [getHealth, getOpenApi, getReference];
