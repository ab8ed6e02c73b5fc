/**
 * The statuses of a conversation: a schema-level fact the data layer also needs (one listing per
 * status) without loading the conversation schemas into a function that reads no
 * conversation request (the PDF transcript worker).
 */
export const conversationStatuses = ['open', 'pending', 'snoozed', 'closed'] as const;
