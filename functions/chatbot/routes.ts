import { getChatbotConfig, putChatbotConfig } from './config';

export const chatbotRoutes = [getChatbotConfig, putChatbotConfig];
