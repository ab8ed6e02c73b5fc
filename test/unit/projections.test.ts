import { afterEach, describe, expect, it, vi } from 'vitest';
import { presentField } from '../../shared/custom-fields/present';
import { storedConversationOf, toConversation } from '../../shared/db/conversations';
import { toDelivery } from '../../shared/db/deliveries';
import { discordChannels } from '../../shared/db/discord-channels';
import { toDomainEvent } from '../../shared/db/events';
import { exportJobOf, type StoredExportJob } from '../../shared/db/exports';
import { toMessage } from '../../shared/db/messages';
import { toNote } from '../../shared/db/notes';
import { project, projectionOf, projector } from '../../shared/db/project';
import { toSurvey } from '../../shared/db/surveys';
import { newStoredVisitor, profileOf } from '../../shared/db/visitor-record';
import { webhooks } from '../../shared/db/webhooks';
import { presentArticle, presentCollection } from '../../shared/kb/present';
import { localeResolver } from '../../shared/locale/resolve';
import { aiProvider } from '../../shared/schemas/ai-provider';
import { auditEvent } from '../../shared/schemas/audit';
import { assignmentEvent, conversation } from '../../shared/schemas/conversation';
import { customField } from '../../shared/schemas/custom-field';
import { discordChannel } from '../../shared/schemas/discord';
import { eventDataSchemas } from '../../shared/schemas/event-data';
import { domainEvent } from '../../shared/schemas/event-feed';
import { domainEventTypes } from '../../shared/schemas/events';
import { exportJob } from '../../shared/schemas/export';
import { kbArticle, kbCollection } from '../../shared/schemas/kb';
import { messageRecord } from '../../shared/schemas/message';
import { built } from '../../shared/schemas/names';
import { note } from '../../shared/schemas/note';
import { createdApiKey, operator, organization } from '../../shared/schemas/organization';
import {
  aiProviderProjection,
  assignmentEventProjection,
  auditEventProjection,
  conversationProjection,
  createdApiKeyProjection,
  customFieldProjection,
  deliveryProjection,
  discordChannelProjection,
  domainEventProjection,
  eventDataProjections,
  exportJobProjection,
  kbArticleProjection,
  kbCollectionProjection,
  messageProjection,
  noteProjection,
  operatorProjection,
  operatorTeamProjection,
  organizationProjection,
  type Projection,
  type RecordProjection,
  surveyProjection,
  uploadProjection,
  visitorProfileProjection,
  visitorProjection,
  webhookProjection,
} from '../../shared/schemas/projections';
import { survey } from '../../shared/schemas/survey';
import { operatorTeam } from '../../shared/schemas/team';
import { upload } from '../../shared/schemas/upload';
import { visitor, visitorProfile } from '../../shared/schemas/visitor';
import { delivery, webhook } from '../../shared/schemas/webhook';
import * as z from '../../shared/schemas/zod';
import { storage } from '../../shared/storage';
import { presentUpload, URL_TTL_SECONDS } from '../../shared/uploads/present';

/**
 * The data layer turns every stored item into its resource through a declared, zod-free projection
 * (so authentication, the events function and the webhook fan-out build none of the schemas). The
 * compiler checks their field names against the schemas' types; this checks what it cannot see:
 * the order of the fields, which is the order of every answer's, and the nesting.
 */
const asText = (value: unknown) => JSON.stringify(value);

describe('resource projections', () => {
  it.each([
    ['Visitor', visitorProjection, visitor],
    ['Conversation', conversationProjection, conversation],
    ['MessageRecord', messageProjection, messageRecord],
    ['Note', noteProjection, note],
    ['Webhook', webhookProjection, webhook],
    ['Delivery', deliveryProjection, delivery],
    ['DiscordChannel', discordChannelProjection, discordChannel],
    ['VisitorProfile', visitorProfileProjection, visitorProfile],
    ['Operator', operatorProjection, operator],
    ['AiProvider', aiProviderProjection, aiProvider],
    ['Survey', surveyProjection, survey],
    ['OperatorTeam', operatorTeamProjection, operatorTeam],
    ['Upload', uploadProjection, upload],
    ['CustomField', customFieldProjection, customField],
    ['KbCollection', kbCollectionProjection, kbCollection],
    ['KbArticle', kbArticleProjection, kbArticle],
    ['AssignmentEvent', assignmentEventProjection, assignmentEvent],
    ['Event', domainEventProjection, domainEvent],
    ['ExportJob', exportJobProjection, exportJob],
    ['CreatedApiKey', createdApiKeyProjection, createdApiKey],
  ] as const)('%s is its schema’s projection, field for field and in order', (_, projection, schema) => {
    expect(projection).toEqual(projectionOf(schema));
    expect(asText(projection)).toBe(asText(projectionOf(schema)));
  });

  it('Organization is its schema’s projection, the chatbot configuration copied whole', () => {
    const expected = { ...(projectionOf(organization) as RecordProjection), chatbot: 'value' };
    expect(asText(organizationProjection)).toBe(asText(expected));
  });

  it('AuditEvent is its schema’s projection, the details copied as read', () => {
    const expected = { ...(projectionOf(auditEvent) as RecordProjection), details: 'value' };
    expect(asText(auditEventProjection)).toBe(asText(expected));
  });

  it.each(domainEventTypes)('the data of %s is its schema’s projection', (type) => {
    expect(eventDataProjections[type]).toEqual(projectionOf(eventDataSchemas[type]));
    expect(asText(eventDataProjections[type])).toBe(asText(projectionOf(eventDataSchemas[type])));
  });
});

const now = '2026-11-24T10:00:00.000Z';
const ids = {
  organization: '0190a3c4-7e51-7000-8000-0000000000aa',
  conversation: '0190a3c4-7e51-7000-8000-0000000000bb',
  visitor: '0190a3c4-7e51-7000-8000-0000000000cc',
  message: '0190a3c4-7e51-7000-8000-0000000000dd',
};

/** A conversation as DynamoDB reads it back: keys in no particular order, the service's own attributes. */
const storedConversation = {
  pk: `ORG#${ids.organization}`,
  sk: `CONV#${ids.conversation}`,
  gsi1pk: 'x',
  entity: 'conversation',
  rev: 4,
  firstVisitorMessageAt: now,
  updatedAt: now,
  customFields: { plan: 'pro', account: 42 },
  visitor: {
    metadata: { tier: 'gold', city: 'Lisbon' },
    lastSeenAt: now,
    id: ids.visitor,
    identifier: 'ada@example.com',
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    totalSessions: 1,
    firstSeenAt: now,
    internalNote: 'not for answers',
  },
  lastMessage: {
    createdAt: now,
    content: 'Where is my order?',
    id: ids.message,
    senderType: 'visitor',
    senderId: ids.visitor,
    type: 'text',
    searchVector: 'where order',
  },
  id: ids.conversation,
  organizationId: ids.organization,
  visitorId: ids.visitor,
  operatorId: null,
  teamId: null,
  status: 'open',
  priority: 'normal',
  source: 'api',
  aiEnabled: false,
  snoozedUntil: null,
  lastMessageAt: now,
  title: 'Where is my order?',
  messageCount: 1,
  unreadCount: 1,
  hasUnreadMessages: true,
  tags: ['billing', 'refund'],
  language: 'en',
  aiSummary: null,
  aiSummaryGeneratedAt: null,
  aiClassification: null,
  metadata: { zeta: 1, alpha: { nested: true } },
  version: 4,
  createdAt: now,
  firstResponseTimeMs: null,
};

describe('projecting a stored conversation', () => {
  const answer = toConversation(storedConversation);

  it('keeps the schema’s fields, in its order, nested records included', () => {
    expect(Object.keys(answer)).toEqual(Object.keys(built(conversation).shape));
    expect(Object.keys(answer.visitor)).toEqual(Object.keys(built(visitor).shape));
    expect(Object.keys(answer.lastMessage ?? {})).toEqual([
      'id',
      'senderType',
      'senderId',
      'type',
      'content',
      'createdAt',
    ]);
    expect(conversation.safeParse(answer).success).toBe(true);
  });

  it('sorts free-form maps by key and copies lists as they are', () => {
    expect(asText(answer.customFields)).toBe('{"account":42,"plan":"pro"}');
    expect(asText(answer.metadata)).toBe('{"alpha":{"nested":true},"zeta":1}');
    expect(asText(answer.visitor.metadata)).toBe('{"city":"Lisbon","tier":"gold"}');
    expect(answer.tags).toEqual(['billing', 'refund']);
  });

  it('is what an event of the same conversation carries', () => {
    for (const type of ['conversation.created', 'conversation.updated', 'conversation.assigned'] as const) {
      const event = toDomainEvent({
        id: 'e',
        type,
        timestamp: now,
        organizationId: ids.organization,
        data: storedConversation,
      });
      expect(asText(event.data)).toBe(asText(answer));
    }
    const snoozed = toDomainEvent({
      id: 'e',
      type: 'conversation.snoozed',
      timestamp: now,
      organizationId: ids.organization,
      data: { ...storedConversation, snoozeReason: 'Waiting for the courier' },
    });
    expect(asText(snoozed.data)).toBe(asText({ ...answer, snoozeReason: 'Waiting for the courier' }));
  });

  it('leaves a null nested record null', () => {
    expect(toConversation({ ...storedConversation, lastMessage: null }).lastMessage).toBeNull();
  });
});

describe('projecting messages and notes', () => {
  it('keeps their schemas’ fields in order and drops storage attributes', () => {
    const storedMessage = {
      sk: 'MSG#1',
      mentions: null,
      metadata: { b: 2, a: 1 },
      id: ids.message,
      orgId: ids.organization,
      conversationId: ids.conversation,
      senderType: 'visitor',
      senderId: ids.visitor,
      content: 'Hello',
      type: 'text',
      isRead: false,
      isEdited: false,
      editedAt: null,
      createdAt: now,
      deletedAt: null,
      replyToId: null,
      searchVector: 'hello',
    };
    const answer = toMessage(storedMessage);
    expect(Object.keys(answer)).toEqual(Object.keys(built(messageRecord).shape));
    expect(asText(answer.metadata)).toBe('{"a":1,"b":2}');
    expect(messageRecord.safeParse(answer).success).toBe(true);

    const storedNote = {
      pk: 'p',
      updatedAt: now,
      mentions: [ids.visitor],
      id: ids.message,
      conversationId: ids.conversation,
      authorId: ids.visitor,
      authorName: 'Ada',
      content: 'Call back',
      createdAt: now,
    };
    expect(Object.keys(toNote(storedNote))).toEqual(Object.keys(built(note).shape));
  });
});

describe('projecting a visitor as a contact', () => {
  it('keeps its schema’s fields in order, the count in its place, and not `rev`', () => {
    const stored = newStoredVisitor({ id: ids.visitor, metadata: { tier: 'gold', city: 'Lisbon' } });
    const answer = profileOf({ ...stored, rev: 7 }, 3);
    expect(Object.keys(answer)).toEqual(Object.keys(built(visitorProfile).shape));
    expect(answer.conversationCount).toBe(3);
    expect(asText(answer.metadata)).toBe('{"city":"Lisbon","tier":"gold"}');
    expect(visitorProfile.safeParse(answer).success).toBe(true);
  });
});

describe('projecting what the delivery workers read', () => {
  /** A webhook, a delivery and a channel in one item, keys in no particular order, secrets included. */
  const stored = {
    pk: 'ORG#o',
    sk: 'WEBHOOK#w',
    entity: 'webhook',
    expiresAt: 1_767_225_600,
    payload: '{"id":"e"}',
    secretSealed: 'sealed',
    nextAttemptAt: null,
    updatedAt: now,
    status: 'pending',
    active: true,
    id: ids.message,
    webhookId: ids.conversation,
    eventId: ids.visitor,
    event: 'conversation.created',
    url: 'https://example.com/hook',
    events: ['conversation.created'],
    attempts: 1,
    responseStatus: 500,
    error: 'http_500',
    createdAt: now,
    lastAttemptAt: now,
    channelId: '123456789012345678',
    name: 'support',
    type: 0,
  };

  it('keeps their schemas’ fields in order, and neither payloads nor secrets', () => {
    expect(Object.keys(webhooks.toWebhook(stored))).toEqual(Object.keys(built(webhook).shape));
    expect(Object.keys(toDelivery(stored))).toEqual(Object.keys(built(delivery).shape));
    expect(Object.keys(discordChannels.toChannel(stored))).toEqual(Object.keys(built(discordChannel).shape));
    expect(webhook.safeParse(webhooks.toWebhook(stored)).success).toBe(true);
    expect(delivery.safeParse(toDelivery(stored)).success).toBe(true);
  });
});

describe('projections of other schemas', () => {
  const item = z.object({ b: z.string(), a: z.nullable(z.record(z.string(), z.unknown())) });
  const schema = z.object({
    list: z.array(item),
    names: z.array(z.string()),
    maybe: z.optional(item),
  });

  it('project arrays of records element by element', () => {
    expect(projectionOf(schema)).toEqual({
      list: [{ b: 'value', a: 'map' }],
      names: 'value',
      maybe: { b: 'value', a: 'map' },
    });
    const projected = projector(projectionOf(schema))({
      extra: true,
      maybe: undefined,
      names: ['y', 'x'],
      list: [
        { a: { z: 1, y: 2 }, b: 'first', c: 'dropped' },
        { a: null, b: 'second' },
      ],
    });
    expect(asText(projected)).toBe(
      '{"list":[{"b":"first","a":{"y":2,"z":1}},{"b":"second","a":null}],"names":["y","x"]}',
    );
  });

  it('copy a value of another kind than declared as it is', () => {
    const project = projector({ a: 'value', nested: { b: 'value' }, map: 'map', list: [{ c: 'value' }] });
    const odd = { a: 1, nested: 'text', map: ['not', 'a', 'map'], list: 'none' };
    expect(project(odd)).toEqual(odd);
    expect(project(null)).toBeNull();
  });
});

describe('internal attributes', () => {
  /** What the table stores beside a resource's fields: keys, index keys, TTL, entity tag, claims, state. */
  const internal = {
    pk: 'ORG#o',
    sk: 'X#x',
    gsi1pk: 'g1',
    gsi1sk: 'g1',
    gsi2pk: 'g2',
    gsi2sk: 'g2',
    gsi3pk: 'g3',
    gsi3sk: 'g3',
    gsi4pk: 'g4',
    gsi4sk: 'g4',
    expiresAt: 1_767_225_600,
    entity: 'thing',
    firstResponseClaim: 'claimed',
    uploadClaim: 'claimed',
    editCount: 3,
    rev: 7,
    apiKeySealed: 'sealed',
    secretSealed: 'sealed',
  };

  /** A value for every field a projection declares; every nested record carries the internals too. */
  function filled(projection: Projection): unknown {
    if (projection === 'value') return 'v';
    if (projection === 'map') return { b: 1, a: 2 };
    if (Array.isArray(projection)) return [filled((projection as readonly [Projection])[0])];
    const fields = Object.entries(projection as RecordProjection).map(([name, field]) => [
      name,
      filled(field),
    ]);
    return { ...internal, ...Object.fromEntries(fields) };
  }

  /** Every key of a value, at any depth (free-form maps excepted: their keys are the client's). */
  function keysOf(value: unknown, projection: Projection): string[] {
    if (projection === 'value' || projection === 'map' || typeof value !== 'object' || value === null)
      return [];
    if (Array.isArray(value))
      return value.flatMap((element) => keysOf(element, (projection as readonly [Projection])[0]));
    const fields = projection as RecordProjection;
    return Object.entries(value).flatMap(([name, inner]) => [
      name,
      ...keysOf(inner, fields[name] ?? 'value'),
    ]);
  }

  const declared: [string, RecordProjection][] = [
    ['Visitor', visitorProjection],
    ['VisitorProfile', visitorProfileProjection],
    ['Conversation', conversationProjection],
    ['Message', messageProjection],
    ['Note', noteProjection],
    ['Webhook', webhookProjection],
    ['Delivery', deliveryProjection],
    ['DiscordChannel', discordChannelProjection],
    ['Organization', organizationProjection],
    ['Operator', operatorProjection],
    ['AiProvider', aiProviderProjection],
    ['Survey', surveyProjection],
    ['OperatorTeam', operatorTeamProjection],
    // Not Upload: its `expiresAt` is its URL's, which the presenter sets over the item's TTL (below).
    ['CustomField', customFieldProjection],
    ['KbCollection', kbCollectionProjection],
    ['KbArticle', kbArticleProjection],
    ['AuditEvent', auditEventProjection],
    ['AssignmentEvent', assignmentEventProjection],
    ['Event', domainEventProjection],
    ['CreatedApiKey', createdApiKeyProjection],
    // Not ExportJob: its `expiresAt` is its download URL's, which the route sets (below).
    ...domainEventTypes.map((type): [string, RecordProjection] => [
      `${type} data`,
      eventDataProjections[type],
    ]),
  ];

  it.each(declared)('never reach a %s, at any depth', (_, projection) => {
    const stored = filled(projection) as object;
    const resource = project(projection as never)(stored);
    const leaked = keysOf(resource, projection).filter((name) => Object.hasOwn(internal, name));
    expect(leaked).toEqual([]);
    expect(Object.keys(resource as object)).toEqual(Object.keys(projection));
  });

  it('never reach what the entity modules answer', () => {
    const conversationItem = { ...internal, ...storedConversation };
    const readers: [string, unknown][] = [
      ['conversation', toConversation(conversationItem)],
      ['message', toMessage({ ...internal, ...(filled(messageProjection) as object) })],
      ['note', toNote({ ...internal, ...(filled(noteProjection) as object) })],
      ['webhook', webhooks.toWebhook({ ...internal, ...(filled(webhookProjection) as object) })],
      ['delivery', toDelivery({ ...internal, ...(filled(deliveryProjection) as object) })],
      [
        'channel',
        discordChannels.toChannel({ ...internal, ...(filled(discordChannelProjection) as object) }),
      ],
      ['survey', toSurvey({ ...internal, ...(filled(surveyProjection) as object) })],
      [
        'visitor profile',
        profileOf({ ...internal, ...(filled(visitorProfileProjection) as object) } as never, 2),
      ],
      [
        'event',
        toDomainEvent({
          ...internal,
          id: 'e',
          type: 'conversation.updated',
          timestamp: now,
          organizationId: 'o',
          data: conversationItem,
        }),
      ],
    ];
    for (const [name, resource] of readers) {
      const leaked = JSON.stringify(resource).match(
        /"(pk|sk|gsi\dpk|gsi\dsk|entity|expiresAt|\w+Claim|\w+Sealed|rev|editCount)":/g,
      );
      expect([name, leaked]).toEqual([name, null]);
    }
  });

  it('never reach a localized answer, nor its options or translations', () => {
    const resolver = localeResolver({ locales: ['en'], defaultLocale: 'en' }, undefined);
    const translation = (texts: Record<string, unknown>) => ({
      ...internal,
      ...(filled(kbArticleProjection.translations[0]) as object),
      ...texts,
      locale: 'en',
      status: 'published',
    });
    const stored = {
      ...internal,
      rev: 3,
      storedBytes: 10,
      articleCounts: { draft: 0, published: 2, archived: 0 },
    };
    const answers: [string, unknown, object][] = [
      [
        'field',
        presentField(
          {
            ...stored,
            ...(filled(customFieldProjection) as object),
            options: [
              { ...internal, id: 'o', value: 'v', sortOrder: 0, translations: [translation({ label: 'L' })] },
            ],
            translations: [translation({ label: 'L', placeholder: null, validationMessage: null })],
          } as never,
          resolver,
        ),
        customField,
      ],
      [
        'collection',
        presentCollection(
          {
            ...stored,
            ...(filled(kbCollectionProjection) as object),
            translations: [translation({ name: 'N' })],
          } as never,
          resolver,
        ),
        kbCollection,
      ],
      [
        'article',
        presentArticle(
          {
            ...stored,
            ...(filled(kbArticleProjection) as object),
            translations: [translation({ title: 'T' })],
          } as never,
          resolver,
        ),
        kbArticle,
      ],
    ];
    for (const [name, answer, schema] of answers) {
      const leaked = JSON.stringify(answer).match(
        /"(pk|sk|gsi\dpk|gsi\dsk|entity|expiresAt|\w+Claim|\w+Sealed|rev|editCount|storedBytes|articleCounts)":/g,
      );
      expect([name, leaked]).toEqual([name, null]);
      expect(Object.keys(answer as object)).toEqual(Object.keys(built(schema as typeof kbArticle).shape));
    }
  });

  describe('never reach an upload answer, and the TTL is not its expiresAt', () => {
    afterEach(() => vi.restoreAllMocks());

    /** An upload item as read: keys, the entity tag, the TTL (`expiresAt`, epoch seconds), `pendingUntil`. */
    const uploadItem = (status: string) => ({
      ...internal,
      pendingUntil: now,
      id: ids.message,
      orgId: ids.organization,
      filename: 'invoice.pdf',
      contentType: 'application/pdf',
      size: 48_213,
      status,
      sha256: status === 'pending' ? null : 'a'.repeat(64),
      owner: `visitor:${ids.visitor}`,
      createdAt: now,
      objectKey: `pending/${ids.organization}/${ids.message}`,
      conversationId: null,
      messageId: null,
    });

    it.each([
      ['pending', ['uploadUrl', 'uploadMethod', 'uploadHeaders']],
      ['ready', ['downloadUrl', 'sha256']],
      ['rejected', []],
    ])('%s', async (status, urlFields) => {
      vi.spyOn(storage, 'uploadUrl').mockResolvedValue('https://storage.example/put');
      vi.spyOn(storage, 'downloadUrl').mockResolvedValue('https://storage.example/get');
      const before = Date.now();
      const answer = await presentUpload(uploadItem(status) as never);
      const json = JSON.parse(JSON.stringify(answer)) as Record<string, unknown>;

      expect(
        JSON.stringify(answer).match(
          /"(pk|sk|gsi\dpk|gsi\dsk|entity|\w+Claim|\w+Sealed|rev|editCount|pendingUntil|owner|objectKey|orgId)":/g,
        ),
      ).toBeNull();
      const fields = Object.keys(built(upload).shape);
      const base = ['id', 'filename', 'contentType', 'size', 'status', 'expiresAt', 'createdAt'];
      expect(Object.keys(json)).toEqual(
        fields.filter((name) => base.includes(name) || urlFields.includes(name)),
      );
      expect(upload.safeParse(answer).success).toBe(true);
      if (status === 'rejected') {
        expect(json.expiresAt).toBeNull();
      } else {
        const expiresMs = Date.parse(String(json.expiresAt));
        expect(expiresMs).toBeGreaterThanOrEqual(before + URL_TTL_SECONDS * 1000);
        expect(expiresMs).toBeLessThanOrEqual(Date.now() + URL_TTL_SECONDS * 1000);
      }
    });
  });

  describe('never reach an export job, and the TTL is not its expiresAt', () => {
    /** A job as read: keys, the entity tag, the TTL (`expiresAt`, epoch seconds), its own state. */
    const job = (status: StoredExportJob['status'], error: string | null = null) =>
      ({
        ...internal,
        id: ids.message,
        orgId: ids.organization,
        kind: 'transcript_pdf',
        conversationId: ids.conversation,
        status,
        objectKey: status === 'completed' ? `transcripts/${ids.organization}/${ids.message}.pdf` : null,
        error,
        requestedBy: { type: 'operator', id: ids.visitor },
        createdAt: now,
        updatedAt: now,
      }) as StoredExportJob;

    it.each([
      ['queued', null, '{"jobId":"ID","status":"queued"}'],
      ['running', null, '{"jobId":"ID","status":"running"}'],
      ['completed', null, '{"jobId":"ID","status":"completed"}'],
      ['failed', 'render_failed', '{"jobId":"ID","status":"failed","error":"render_failed"}'],
      ['failed', null, '{"jobId":"ID","status":"failed"}'],
    ] as const)('%s (error %s)', (status, error, expected) => {
      const answer = exportJobOf(job(status, error));
      expect(asText(answer)).toBe(expected.replace('ID', ids.message));
      expect(Object.keys(answer)).toEqual(Object.keys(built(exportJob).shape));
      expect(exportJob.safeParse(answer).success).toBe(true);
      if (status !== 'completed') return;
      // What the route sets on a completed job lands in the schema's place.
      answer.downloadUrl = 'https://storage.example/get';
      answer.expiresAt = now;
      expect(Object.keys(JSON.parse(asText(answer)))).toEqual([
        'jobId',
        'status',
        'downloadUrl',
        'expiresAt',
      ]);
    });
  });

  it('leave the stored state only its own fields, never keys or claims', () => {
    const state = storedConversationOf({ ...internal, ...storedConversation });
    expect(Object.keys(state).filter((name) => Object.hasOwn(internal, name) && name !== 'rev')).toEqual([]);
    expect(state.rev).toBe(storedConversation.rev);
  });
});
