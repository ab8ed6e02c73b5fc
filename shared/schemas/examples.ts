import type { Conversation, MessagePreview } from './conversation';
import type { CustomField, CustomFieldOption } from './custom-field';
import type { DomainEventType } from './events';
import type { Message, MessageResource } from './message';
import type { Note } from './note';
import type { Operator, Organization } from './organization';
import type { CsatReport, Survey } from './survey';
import type { OperatorTeam, OperatorWithTeams } from './team';
import type { Visitor, VisitorProfile } from './visitor';
import type { Delivery, Webhook } from './webhook';

/**
 * The resources the API description shows, one consistent story: Ada asks where her order is and
 * Grace answers. Typed by the response schemas, and validated against their JSON Schema by a test,
 * so an example cannot drift from what the API answers.
 */
export const ids = {
  organization: '019a7c1e-5b2a-7c31-9f4e-2d8a6b0c1e01',
  visitor: '019a7c1e-6d40-7a12-8b3c-4e5f6a7b8c02',
  conversation: '019a7c1f-0a11-7b22-9c33-0d44e55f6603',
  message: '019a7c1f-0a12-7c44-8d55-1e66f77a8804',
  reply: '019a7c1f-4b20-7e66-9f77-2a88b99cac05',
  operator: '019a7c1e-5c10-7d21-8e32-3f43a54b6506',
  note: '019a7c1f-5c30-7a88-8b99-3cadbecfd007',
  apiKey: '019a7c1e-5d20-7e43-9f54-4a65b76c8708',
  webhook: '019a7c20-1a00-7b11-8c22-5d33e44f5509',
  event: '019a7c1f-0a13-7d55-9e66-6f77a88b990a',
  delivery: '019a7c20-2b00-7c22-9d33-6e44f55a660b',
  team: '019a7c1e-5e30-7f54-8a65-5b76c87d980c',
  customField: '019a7c1e-7a10-7b21-8c32-6d43e54f760d',
  fieldLabelEn: '019a7c1e-7a10-7b22-9d43-7e54f65a870e',
  fieldLabelFr: '019a7c1e-7a10-7b23-8e54-8f65a76b980f',
  optionLate: '019a7c1e-7a10-7b24-9f65-9a76b87ca910',
  optionLateEn: '019a7c1e-7a10-7b25-8a76-0b87c98dba11',
  optionLateFr: '019a7c1e-7a10-7b26-9b87-1c98da9ecb12',
  optionDamaged: '019a7c1e-7a10-7b27-8c98-2da9ebafdc13',
  optionDamagedEn: '019a7c1e-7a10-7b28-9da9-3ebafcb0ed14',
  upload: '019a7c1f-0b00-7a31-8b42-5c53d64e7515',
} as const;

export const visitorExample: Visitor = {
  id: ids.visitor,
  identifier: 'ada@example.com',
  fingerprint: null,
  geoCountry: 'GB',
  geoCity: 'London',
  totalSessions: 3,
  firstSeenAt: '2026-11-20T09:12:44.120Z',
  lastSeenAt: '2026-11-21T10:00:00.000Z',
  metadata: { plan: 'pro' },
};

export const visitorProfileExample: VisitorProfile = {
  ...visitorExample,
  externalId: 'crm-4711',
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: '+442071234567',
  conversationCount: 2,
  updatedAt: '2026-11-21T10:05:00.000Z',
  version: 2,
  mergedInto: null,
  erasedAt: null,
};

/** Without files, a message reads the same as a record (events) and as a resource (the API). */
type MessageExample = Message & MessageResource;

export const messageExample: MessageExample = {
  id: ids.message,
  orgId: ids.organization,
  conversationId: ids.conversation,
  senderType: 'visitor',
  senderId: ids.visitor,
  content: 'Hello, my order is late',
  type: 'text',
  metadata: {},
  isRead: true,
  isEdited: false,
  editedAt: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  deletedAt: null,
  replyToId: null,
  mentions: null,
  searchVector: 'hello my order is late',
  attachments: [],
};

export const replyExample: MessageExample = {
  ...messageExample,
  id: ids.reply,
  senderType: 'operator',
  senderId: ids.operator,
  content: 'It left our warehouse this morning: tracking number 1Z999',
  isRead: false,
  createdAt: '2026-11-21T10:02:05.310Z',
  replyToId: ids.message,
  searchVector: 'it left our warehouse this morning tracking number 1z999',
};

const lastMessage: MessagePreview = {
  id: replyExample.id,
  senderType: replyExample.senderType,
  senderId: replyExample.senderId,
  type: replyExample.type,
  content: replyExample.content,
  createdAt: replyExample.createdAt,
};

export const conversationExample: Conversation = {
  id: ids.conversation,
  organizationId: ids.organization,
  visitorId: ids.visitor,
  operatorId: ids.operator,
  teamId: null,
  status: 'open',
  priority: 'high',
  source: 'widget',
  aiEnabled: false,
  snoozedUntil: null,
  lastMessageAt: '2026-11-21T10:02:05.310Z',
  title: 'Hello, my order is late',
  messageCount: 2,
  unreadCount: 0,
  hasUnreadMessages: false,
  tags: ['orders'],
  customFields: { orderNumber: 'A-1042' },
  language: 'en',
  aiSummary: null,
  aiSummaryGeneratedAt: null,
  aiClassification: null,
  metadata: { channel: 'web' },
  version: 4,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:02:05.310Z',
  visitor: visitorExample,
  lastMessage,
  firstResponseTimeMs: 125310,
};

export const newConversationExample: Conversation = {
  ...conversationExample,
  operatorId: null,
  priority: 'normal',
  source: 'api',
  lastMessageAt: '2026-11-21T10:00:00.000Z',
  messageCount: 1,
  unreadCount: 1,
  hasUnreadMessages: true,
  customFields: {},
  metadata: {},
  version: 1,
  updatedAt: '2026-11-21T10:00:00.000Z',
  lastMessage: {
    id: messageExample.id,
    senderType: 'visitor',
    senderId: ids.visitor,
    type: 'text',
    content: messageExample.content,
    createdAt: messageExample.createdAt,
  },
  firstResponseTimeMs: null,
};

export const noteExample: Note = {
  id: ids.note,
  conversationId: ids.conversation,
  authorId: ids.operator,
  authorName: 'Grace Hopper',
  content: 'Refund approved if the parcel is not here by Friday',
  mentions: [],
  createdAt: '2026-11-21T10:03:00.000Z',
  updatedAt: '2026-11-21T10:03:00.000Z',
};

export const organizationExample: Organization = {
  id: ids.organization,
  name: 'Acme Retail',
  modules: ['automation_api'],
  locales: ['en', 'fr'],
  defaultLocale: 'en',
  historyWindowDays: null,
  rateLimitPerMinute: null,
  widgetKey: 'svc_wpk_x8P2mQ4rT7vW1yZ3bC5dF6gH9jK0lN2pQ4sU6wY8aC1eG3iK5mO7qS9uW1yA3cE5',
  chatbot: {
    enabled: false,
    schedule: null,
    knowledgeThreshold: 0.35,
    rules: [],
    intentPolicies: [],
    updatedAt: '2026-11-01T08:00:00.000Z',
  },
  createdAt: '2026-11-01T08:00:00.000Z',
  updatedAt: '2026-11-01T08:00:00.000Z',
};

export const operatorExample: Operator = {
  id: ids.operator,
  orgId: ids.organization,
  name: 'Grace Hopper',
  email: 'grace@acme.example',
  role: 'operator',
  createdAt: '2026-11-01T08:05:00.000Z',
};

export const webhookExample: Webhook = {
  id: ids.webhook,
  url: 'https://hooks.acme.example/conversations',
  events: ['conversation.created', 'message.created'],
  active: true,
  createdAt: '2026-11-02T12:00:00.000Z',
  updatedAt: '2026-11-02T12:00:00.000Z',
};

export const deliveryExample: Delivery = {
  id: ids.delivery,
  webhookId: ids.webhook,
  eventId: ids.event,
  event: 'message.created',
  status: 'succeeded',
  attempts: 1,
  responseStatus: 200,
  error: null,
  createdAt: '2026-11-21T10:02:05.400Z',
  lastAttemptAt: '2026-11-21T10:02:05.650Z',
  nextAttemptAt: null,
};

export const examplePage = <T>(item: T, total = 1) => ({
  data: [item],
  pagination: {
    totalItems: total,
    page: 1,
    pageSize: 20,
    hasNextPage: total > 1,
    hasPrevPage: false,
  },
});

/** An opaque cursor as the API hands them out (signed; this one is only for show). */
export const cursorExample =
  'eyJvIjoiMDE5YTdjMWUiLCJxIjoiY29udmVyc2F0aW9ucyIsImsiOnt9fQ.q1Ww7bN4c9y0cVQ2dJ0q3Zr8mE5Yx1oGk7pL2aS4tHc';

/** What `data` holds in each event's example: the resource after the change. */
export const eventDataExamples: Record<DomainEventType, unknown> = {
  'conversation.created': newConversationExample,
  'conversation.updated': conversationExample,
  'conversation.snoozed': {
    ...conversationExample,
    status: 'snoozed',
    snoozedUntil: '2026-11-22T09:00:00.000Z',
    snoozeReason: 'Waiting for the courier',
  },
  'conversation.closed': { ...conversationExample, status: 'closed' },
  'conversation.deleted': { id: ids.conversation, deletedAt: '2026-11-21T11:00:00.000Z', version: 5 },
  'conversation.assigned': conversationExample,
  'message.created': replyExample,
  'message.updated': { ...replyExample, isEdited: true, editedAt: '2026-11-21T10:04:00.000Z' },
  'note.created': noteExample,
  'note.deleted': {
    id: ids.note,
    conversationId: ids.conversation,
    deletedBy: { type: 'operator', id: ids.operator },
    deletedAt: '2026-11-21T10:09:00.000Z',
  },
  'visitor.created': { ...visitorProfileExample, version: 1 },
  'visitor.updated': visitorProfileExample,
  'visitor.merged': { ...visitorProfileExample, version: 3, totalSessions: 5 },
  'visitor.erased': {
    ...visitorProfileExample,
    identifier: '',
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    metadata: {},
    externalId: null,
    name: null,
    email: null,
    phone: null,
    version: 3,
    erasedAt: '2026-11-21T12:00:00.000Z',
  },
};

/** An event as the feed serves it and a webhook delivers it. */
export const eventExample = (type: DomainEventType) => ({
  id: ids.event,
  type,
  timestamp: '2026-11-21T10:02:05.310Z',
  organizationId: ids.organization,
  data: eventDataExamples[type],
});

const fieldCreatedAt = '2026-11-01T08:10:00.000Z';
const fieldReviewedAt = '2026-11-01T09:30:00.000Z';

/** An option as the API answers it, resolved for English. */
const optionExample = (
  id: string,
  value: string,
  sortOrder: number,
  translations: CustomFieldOption['translations'],
): CustomFieldOption => ({
  id,
  value,
  sortOrder,
  label: translations[0]?.label ?? value,
  locale: 'en',
  fallbackUsed: false,
  translations,
});

const lifecycle = {
  sourceLocale: null,
  machineTranslatedAt: null,
  reviewedAt: null,
  reviewedBy: null,
  createdAt: fieldCreatedAt,
  updatedAt: fieldCreatedAt,
};

/** The French labels were machine-translated from English, then reviewed by Grace. */
const machineTranslated = {
  sourceLocale: 'en',
  machineTranslatedAt: '2026-11-01T08:10:00.000Z',
  reviewedAt: fieldReviewedAt,
  reviewedBy: ids.operator,
  createdAt: fieldCreatedAt,
  updatedAt: fieldReviewedAt,
};

/** What went wrong with Ada's order: a select field of conversations, in English and French. */
export const customFieldExample: CustomField = {
  id: ids.customField,
  orgId: ids.organization,
  name: 'issueType',
  type: 'select',
  required: true,
  target: 'conversation',
  sortOrder: 10,
  active: true,
  label: 'Issue type',
  placeholder: 'What went wrong?',
  validationMessage: 'Choose what went wrong with the order',
  locale: 'en',
  fallbackUsed: false,
  options: [
    optionExample(ids.optionLate, 'late', 0, [
      { id: ids.optionLateEn, locale: 'en', status: 'published', label: 'Late delivery', ...lifecycle },
      {
        id: ids.optionLateFr,
        locale: 'fr',
        status: 'published',
        label: 'Livraison en retard',
        ...machineTranslated,
      },
    ]),
    // No French label yet: a French read answers this option in English, with fallbackUsed.
    optionExample(ids.optionDamaged, 'damaged', 1, [
      { id: ids.optionDamagedEn, locale: 'en', status: 'published', label: 'Damaged parcel', ...lifecycle },
    ]),
  ],
  translations: [
    {
      id: ids.fieldLabelEn,
      locale: 'en',
      status: 'published',
      label: 'Issue type',
      placeholder: 'What went wrong?',
      validationMessage: 'Choose what went wrong with the order',
      ...lifecycle,
    },
    {
      id: ids.fieldLabelFr,
      locale: 'fr',
      status: 'published',
      label: 'Type de problème',
      placeholder: 'Quel est le problème ?',
      validationMessage: 'Choisissez le problème rencontré',
      ...machineTranslated,
    },
  ],
  createdAt: fieldCreatedAt,
  updatedAt: fieldReviewedAt,
};

/** The request that creates `customFieldExample` (the French texts as the translation pipeline sent them). */
export const createCustomFieldExample = {
  name: 'issueType',
  type: 'select' as const,
  required: true,
  sortOrder: 10,
  translations: [
    {
      locale: 'en',
      status: 'published' as const,
      label: 'Issue type',
      placeholder: 'What went wrong?',
      validationMessage: 'Choose what went wrong with the order',
    },
    {
      locale: 'fr',
      status: 'published' as const,
      label: 'Type de problème',
      placeholder: 'Quel est le problème ?',
      validationMessage: 'Choisissez le problème rencontré',
      sourceLocale: 'en',
      machineTranslatedAt: '2026-11-01T08:10:00.000Z',
    },
  ],
  options: [
    {
      value: 'late',
      translations: [
        { locale: 'en', status: 'published' as const, label: 'Late delivery' },
        {
          locale: 'fr',
          status: 'published' as const,
          label: 'Livraison en retard',
          sourceLocale: 'en',
          machineTranslatedAt: '2026-11-01T08:10:00.000Z',
        },
      ],
    },
    {
      value: 'damaged',
      translations: [{ locale: 'en', status: 'published' as const, label: 'Damaged parcel' }],
    },
  ],
};

/** `customFieldExample` as its creation answered it: the French texts not reviewed yet. */
const unreviewed = <T extends { reviewedAt: string | null }>(translation: T): T =>
  translation.reviewedAt
    ? { ...translation, reviewedAt: null, reviewedBy: null, updatedAt: fieldCreatedAt }
    : translation;
export const newCustomFieldExample: CustomField = {
  ...customFieldExample,
  options: customFieldExample.options.map((option) => ({
    ...option,
    translations: option.translations.map(unreviewed),
  })),
  translations: customFieldExample.translations.map(unreviewed),
  updatedAt: fieldCreatedAt,
};

/** Grace's team: the people who answer delivery questions first. */
export const teamExample: OperatorTeam = {
  id: ids.team,
  orgId: ids.organization,
  name: 'Deliveries',
  description: 'Late, lost and damaged parcels',
  priority: 80,
  memberIds: [ids.operator],
  createdAt: '2026-11-03T09:00:00.000Z',
  updatedAt: '2026-11-03T09:15:00.000Z',
};

export const createTeamExample = {
  name: teamExample.name,
  description: teamExample.description,
  priority: teamExample.priority,
};

export const newTeamExample: OperatorTeam = {
  ...teamExample,
  memberIds: [],
  updatedAt: teamExample.createdAt,
};

export const operatorWithTeamsExample: OperatorWithTeams = { ...operatorExample, teamIds: [ids.team] };

/** Ada rates Grace's help after the conversation closed. */
export const surveyExample: Survey = {
  id: '019a7c21-3c00-7d11-9e22-7f33a44b5515',
  orgId: ids.organization,
  conversationId: ids.conversation,
  visitorId: ids.visitor,
  operatorId: ids.operator,
  score: 5,
  comment: 'Quick and friendly, thank you!',
  isActive: true,
  createdAt: '2026-11-21T10:20:00.000Z',
  updatedAt: '2026-11-21T10:20:00.000Z',
  deactivatedAt: null,
};

/** A week of CSAT: three responses, two of them credited to Grace. */
export const csatExample: CsatReport = {
  period: '7d',
  averageScore: 4.333333333333333,
  totalResponses: 3,
  responseRate: 0.75,
  distribution: { '1': 0, '2': 0, '3': 1, '4': 0, '5': 2 },
  byOperator: [{ operatorId: ids.operator, averageScore: 5, responses: 2 }],
  daily: [
    { date: '2026-11-15', averageScore: null, responses: 0 },
    { date: '2026-11-16', averageScore: 3, responses: 1 },
    { date: '2026-11-17', averageScore: null, responses: 0 },
    { date: '2026-11-18', averageScore: null, responses: 0 },
    { date: '2026-11-19', averageScore: null, responses: 0 },
    { date: '2026-11-20', averageScore: 5, responses: 1 },
    { date: '2026-11-21', averageScore: 5, responses: 1 },
  ],
};

/** The first lines of an analytics export of the default window (the 30 days up to the request time). */
export const analyticsCsvExample = [
  'metric,value,period_start,period_end',
  'conversations_created,42,2026-10-23T09:14:00.000Z,2026-11-22T09:14:00.000Z',
  'conversations_closed,38,2026-10-23T09:14:00.000Z,2026-11-22T09:14:00.000Z',
  'messages_total,512,2026-10-23T09:14:00.000Z,2026-11-22T09:14:00.000Z',
  'first_response_time_median_ms,120000,2026-10-23T09:14:00.000Z,2026-11-22T09:14:00.000Z',
  '',
].join('\r\n');
