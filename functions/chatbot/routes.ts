import { getChatbotConfig, putChatbotConfig } from './config';
import { simulateChatbot } from './simulate';

export const chatbotRoutes = [getChatbotConfig, putChatbotConfig, simulateChatbot];
