import type { output } from 'zod/v4/core';
import type { AiProvider } from './ai-provider';
import type { auditEvent } from './audit';
import type { AssignmentEvent, Conversation, MessagePreview } from './conversation';
import type {
  CustomField,
  CustomFieldOption,
  CustomFieldOptionTranslation,
  CustomFieldTranslation,
} from './custom-field';
import type { DiscordChannel } from './discord';
import type { eventDataSchemas } from './event-data';
import type { domainEvent } from './event-feed';
import type { DomainEventType } from './events';
import type { exportJob } from './export';
import type { KbArticle, KbArticleTranslation, KbCollection, KbCollectionTranslation } from './kb';
import type { Message } from './message';
import type { Note } from './note';
import type { createdApiKey, Operator, Organization } from './organization';
import type { Survey } from './survey';
import type { OperatorTeam } from './team';
import type { Upload } from './upload';
import type { Visitor, VisitorProfile } from './visitor';
import type { Delivery, Webhook } from './webhook';

/**
 * How a stored value becomes an answer's value: copied as is, as a free-form map (keys sorted), as
 * a record of exactly the listed fields in that order (each copied as its own projection), or as an
 * array of one projection. A null or missing value, or one of another kind, is copied as is.
 */
export type Projection = 'value' | 'map' | RecordProjection | readonly [Projection];
export type RecordProjection = { readonly [field: string]: Projection };

type Present<T> = Exclude<T, null | undefined>;
type ProjectionOfValue<V> = V extends readonly (infer E)[]
  ? ProjectionOfValue<Present<E>> extends 'value'
    ? 'value'
    : readonly [ProjectionOfValue<Present<E>>]
  : V extends object
    ? string extends keyof V
      ? 'map'
      : ProjectionOf<V>
    : 'value';

/**
 * The projection of a resource type, field by field. A projection declared `satisfies
 * ProjectionOf<Resource>` names every field of the schema's type and no other, and nests where the
 * type nests; the order, which types cannot see, is checked against the schema by a test
 * (test/unit/projections.test.ts).
 */
export type ProjectionOf<T> = { readonly [K in keyof T]-?: ProjectionOfValue<Present<T[K]>> };

/*
 * Every resource the data layer reads is turned from its stored item through one of these
 * allow-lists (shared/db/project.ts `project`), declared without zod: authentication, the events
 * function, the webhook fan-out and the delivery workers read these resources but validate none,
 * and a schema module imported there would bring its schemas and zod into their bundles. The
 * compiler holds each one to its schema's type (every field, no other); test/unit/projections.test.ts
 * holds it to the schema itself, order and nesting included, so the document and the answer agree.
 */

export const visitorProjection = {
  id: 'value',
  identifier: 'value',
  fingerprint: 'value',
  geoCountry: 'value',
  geoCity: 'value',
  totalSessions: 'value',
  firstSeenAt: 'value',
  lastSeenAt: 'value',
  metadata: 'map',
} as const satisfies ProjectionOf<Visitor>;

/** The visitor as a contact (`/api/visitors`, `visitor.*` events). */
export const visitorProfileProjection = {
  ...visitorProjection,
  externalId: 'value',
  name: 'value',
  email: 'value',
  phone: 'value',
  conversationCount: 'value',
  updatedAt: 'value',
  version: 'value',
  mergedInto: 'value',
  erasedAt: 'value',
} as const satisfies ProjectionOf<VisitorProfile>;

const messagePreviewProjection = {
  id: 'value',
  senderType: 'value',
  senderId: 'value',
  type: 'value',
  content: 'value',
  createdAt: 'value',
} as const satisfies ProjectionOf<MessagePreview>;

export const conversationProjection = {
  id: 'value',
  organizationId: 'value',
  visitorId: 'value',
  operatorId: 'value',
  teamId: 'value',
  status: 'value',
  priority: 'value',
  source: 'value',
  aiEnabled: 'value',
  snoozedUntil: 'value',
  lastMessageAt: 'value',
  title: 'value',
  messageCount: 'value',
  unreadCount: 'value',
  hasUnreadMessages: 'value',
  tags: 'value',
  customFields: 'map',
  language: 'value',
  aiSummary: 'value',
  aiSummaryGeneratedAt: 'value',
  aiClassification: 'value',
  metadata: 'map',
  version: 'value',
  createdAt: 'value',
  updatedAt: 'value',
  visitor: visitorProjection,
  lastMessage: messagePreviewProjection,
  firstResponseTimeMs: 'value',
  deletedAt: 'value',
} as const satisfies ProjectionOf<Conversation>;

export const messageProjection = {
  id: 'value',
  orgId: 'value',
  conversationId: 'value',
  senderType: 'value',
  senderId: 'value',
  content: 'value',
  type: 'value',
  metadata: 'map',
  isRead: 'value',
  isEdited: 'value',
  editedAt: 'value',
  createdAt: 'value',
  deletedAt: 'value',
  replyToId: 'value',
  mentions: 'value',
  searchVector: 'value',
  attachments: [{ id: 'value', filename: 'value', contentType: 'value', size: 'value', sha256: 'value' }],
} as const satisfies ProjectionOf<Message>;

export const noteProjection = {
  id: 'value',
  conversationId: 'value',
  authorId: 'value',
  authorName: 'value',
  content: 'value',
  mentions: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<Note>;

type EventData = { [Type in DomainEventType]: output<(typeof eventDataSchemas)[Type]> };

/** What `data` holds for each event type, as shared/schemas/event-data.ts declares it. */
export const eventDataProjections = {
  'conversation.created': conversationProjection,
  'conversation.updated': conversationProjection,
  'conversation.snoozed': { ...conversationProjection, snoozeReason: 'value' },
  'conversation.closed': conversationProjection,
  'conversation.deleted': { id: 'value', deletedAt: 'value', version: 'value' },
  'conversation.assigned': conversationProjection,
  'message.created': messageProjection,
  'message.updated': messageProjection,
  'note.created': noteProjection,
  'note.deleted': {
    id: 'value',
    conversationId: 'value',
    deletedBy: { type: 'value', id: 'value' },
    deletedAt: 'value',
  },
  'visitor.created': visitorProfileProjection,
  'visitor.updated': visitorProfileProjection,
  'visitor.merged': visitorProfileProjection,
  'visitor.erased': visitorProfileProjection,
} as const satisfies { [Type in DomainEventType]: ProjectionOf<EventData[Type]> };

/** An event as the feed serves it and webhooks deliver it; `data` is set through its type's projection. */
export const domainEventProjection = {
  id: 'value',
  type: 'value',
  timestamp: 'value',
  organizationId: 'value',
  data: 'value',
} as const satisfies ProjectionOf<output<typeof domainEvent>>;

/** An entry of a conversation's assignment history. */
export const assignmentEventProjection = {
  id: 'value',
  type: 'value',
  fromOperatorId: 'value',
  toOperatorId: 'value',
  fromTeamId: 'value',
  teamId: 'value',
  actor: { type: 'value', id: 'value' },
  at: 'value',
} as const satisfies ProjectionOf<AssignmentEvent>;

export const webhookProjection = {
  id: 'value',
  url: 'value',
  events: 'value',
  active: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<Webhook>;

export const deliveryProjection = {
  id: 'value',
  webhookId: 'value',
  eventId: 'value',
  event: 'value',
  status: 'value',
  attempts: 'value',
  responseStatus: 'value',
  error: 'value',
  createdAt: 'value',
  lastAttemptAt: 'value',
  nextAttemptAt: 'value',
} as const satisfies ProjectionOf<Delivery>;

export const discordChannelProjection = {
  id: 'value',
  channelId: 'value',
  name: 'value',
  type: 'value',
  events: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<DiscordChannel>;

/** The organization; `chatbot` is rebuilt from the stored configuration (shared/chatbot/config.ts). */
export const organizationProjection = {
  id: 'value',
  name: 'value',
  modules: 'value',
  locales: 'value',
  defaultLocale: 'value',
  historyWindowDays: 'value',
  rateLimitPerMinute: 'value',
  widgetKey: 'value',
  chatbot: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<Omit<Organization, 'chatbot'> & { chatbot: unknown }>;

export const operatorProjection = {
  id: 'value',
  orgId: 'value',
  name: 'value',
  email: 'value',
  role: 'value',
  createdAt: 'value',
} as const satisfies ProjectionOf<Operator>;

/** A new API key as answered once, its secret `key` beside the stored record. */
export const createdApiKeyProjection = {
  id: 'value',
  name: 'value',
  scopes: 'value',
  key: 'value',
  createdAt: 'value',
} as const satisfies ProjectionOf<output<typeof createdApiKey>>;

export const aiProviderProjection = {
  id: 'value',
  name: 'value',
  kind: 'value',
  baseUrl: 'value',
  model: 'value',
  enabled: 'value',
  hasApiKey: 'value',
  apiKeyLast4: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<AiProvider>;

export const surveyProjection = {
  id: 'value',
  orgId: 'value',
  conversationId: 'value',
  visitorId: 'value',
  operatorId: 'value',
  score: 'value',
  comment: 'value',
  isActive: 'value',
  createdAt: 'value',
  updatedAt: 'value',
  deactivatedAt: 'value',
} as const satisfies ProjectionOf<Survey>;

export const operatorTeamProjection = {
  id: 'value',
  orgId: 'value',
  name: 'value',
  description: 'value',
  priority: 'value',
  memberIds: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<OperatorTeam>;

/**
 * The upload as answered (shared/uploads/present.ts `presentUpload`). The URL fields, `sha256` and
 * `expiresAt` are set by the presenter after projecting, over whatever was copied: the answer's
 * `expiresAt` is the presigned URL's ISO instant (or null), while the stored item's attribute of
 * that name is its TTL in epoch seconds.
 */
export const uploadProjection = {
  id: 'value',
  filename: 'value',
  contentType: 'value',
  size: 'value',
  status: 'value',
  uploadUrl: 'value',
  uploadMethod: 'value',
  uploadHeaders: 'map',
  downloadUrl: 'value',
  sha256: 'value',
  expiresAt: 'value',
  createdAt: 'value',
} as const satisfies ProjectionOf<Upload>;

/**
 * A PDF transcript job as answered (shared/db/exports.ts `exportJobOf`, functions/exports/jobs.ts):
 * `jobId` is the job's id; `downloadUrl` and `expiresAt` are the presigned URL's, set after
 * projecting, never the item's TTL attribute `expiresAt` (epoch seconds).
 */
export const exportJobProjection = {
  jobId: 'value',
  status: 'value',
  downloadUrl: 'value',
  expiresAt: 'value',
  error: 'value',
} as const satisfies ProjectionOf<output<typeof exportJob>>;

/** An entry of the audit log; `details` is copied as read, like the organization's `chatbot`. */
export const auditEventProjection = {
  id: 'value',
  type: 'value',
  at: 'value',
  actor: { type: 'value', id: 'value', name: 'value' },
  impersonatedBy: 'value',
  target: { type: 'value', id: 'value' },
  details: 'value',
} as const satisfies ProjectionOf<Omit<output<typeof auditEvent>, 'details'> & { details: unknown }>;

/*
 * Localized resources (shared/schemas/translation.ts): a translation reads `id, locale, status,
 * <texts>, <lifecycle>`; a resolved answer adds the texts of one translation, `locale` and
 * `fallbackUsed` (shared/locale/localized.ts) and lists every translation, drafts included.
 */
const translationHead = { id: 'value', locale: 'value', status: 'value' } as const;
const translationLifecycle = {
  sourceLocale: 'value',
  machineTranslatedAt: 'value',
  reviewedAt: 'value',
  reviewedBy: 'value',
  createdAt: 'value',
  updatedAt: 'value',
} as const;

const customFieldTranslationProjection = {
  ...translationHead,
  label: 'value',
  placeholder: 'value',
  validationMessage: 'value',
  ...translationLifecycle,
} as const satisfies ProjectionOf<CustomFieldTranslation>;

const customFieldOptionTranslationProjection = {
  ...translationHead,
  label: 'value',
  ...translationLifecycle,
} as const satisfies ProjectionOf<CustomFieldOptionTranslation>;

const customFieldOptionProjection = {
  id: 'value',
  value: 'value',
  sortOrder: 'value',
  label: 'value',
  locale: 'value',
  fallbackUsed: 'value',
  translations: [customFieldOptionTranslationProjection],
} as const satisfies ProjectionOf<CustomFieldOption>;

export const customFieldProjection = {
  id: 'value',
  orgId: 'value',
  name: 'value',
  type: 'value',
  required: 'value',
  target: 'value',
  sortOrder: 'value',
  active: 'value',
  label: 'value',
  placeholder: 'value',
  validationMessage: 'value',
  locale: 'value',
  fallbackUsed: 'value',
  options: [customFieldOptionProjection],
  translations: [customFieldTranslationProjection],
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<CustomField>;

const kbCollectionTranslationProjection = {
  ...translationHead,
  name: 'value',
  description: 'value',
  ...translationLifecycle,
} as const satisfies ProjectionOf<KbCollectionTranslation>;

export const kbCollectionProjection = {
  id: 'value',
  orgId: 'value',
  key: 'value',
  icon: 'value',
  sortOrder: 'value',
  name: 'value',
  description: 'value',
  locale: 'value',
  fallbackUsed: 'value',
  articleCount: 'value',
  translations: [kbCollectionTranslationProjection],
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<KbCollection>;

const kbArticleTranslationProjection = {
  ...translationHead,
  title: 'value',
  content: 'value',
  ...translationLifecycle,
} as const satisfies ProjectionOf<KbArticleTranslation>;

export const kbArticleProjection = {
  id: 'value',
  orgId: 'value',
  collectionId: 'value',
  slug: 'value',
  status: 'value',
  title: 'value',
  content: 'value',
  locale: 'value',
  fallbackUsed: 'value',
  translations: [kbArticleTranslationProjection],
  createdAt: 'value',
  updatedAt: 'value',
} as const satisfies ProjectionOf<KbArticle>;
