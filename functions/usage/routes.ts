import { getOrganizationUsage, getTopUsage, getUsage } from './usage';

export const usageRoutes = [getUsage, getOrganizationUsage, getTopUsage];
