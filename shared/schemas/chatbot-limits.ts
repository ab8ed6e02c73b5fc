/**
 * The chatbot configuration's bounds, apart from its schemas: authentication reads every
 * organization's configuration (shared/chatbot/config.ts) and needs the defaults and the size cap,
 * and importing them from ./chatbot.ts built its ~40 zod schemas in the cold start of every API
 * function.
 */
export const MAX_RULES = 100;
export const MAX_INTENT_POLICIES = 100;
export const MAX_KEYWORDS = 50;
export const MAX_ACTIONS = 10;
export const MAX_SCHEDULE_DAYS = 28;
/** The configuration as stored JSON at most: the organization item is read on every cold request. */
export const MAX_CONFIG_BYTES = 64 * 1024;
export const DEFAULT_KNOWLEDGE_THRESHOLD = 0.35;
