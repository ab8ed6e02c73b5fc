import { getMe } from './get-me';

export const identityRoutes = [getMe];
