import { searchConversations } from './search-conversations';

export const searchRoutes = [searchConversations];
