import { describe, expect, it } from 'vitest';
import type { Actor } from '../../shared/conversations/actor';
import { type StoredConversation, withChange } from '../../shared/conversations/state';
import { type ChangeFacts, implicationsOf, impliedWrites } from '../../shared/db/conversation-implications';
import { newConversation } from '../../shared/db/conversations';
import { eventDataOf } from '../../shared/db/events';
import type { Write } from '../../shared/db/transaction';
import { ids, visitorExample } from '../../shared/schemas/examples';

const ORG = ids.organization;
const OPERATOR = '019a7c1e-5e30-7f54-8a65-5b76c87d9a01';
const OTHER_OPERATOR = '019a7c1e-5e30-7f54-8a65-5b76c87d9a02';
const SUPPORT = '019a7c1e-5e30-7f54-8a65-5b76c87d9801';
const BILLING = '019a7c1e-5e30-7f54-8a65-5b76c87d9802';
const actor: Actor = { type: 'operator', id: OPERATOR };
const NOW = '2026-11-21T10:05:00.000Z';

function conversation(changes: Partial<StoredConversation> = {}): StoredConversation {
  return {
    ...newConversation({
      id: ids.conversation,
      organizationId: ORG,
      visitor: visitorExample,
      operatorId: null,
      status: 'open',
      priority: 'normal',
      source: 'api',
      snoozedUntil: null,
      createdAt: '2026-11-21T10:00:00.000Z',
      title: 'Order late',
      tags: [],
      customFields: {},
      language: null,
      metadata: {},
    }),
    ...changes,
  };
}

/** What a change implies, as integrators, the audit history, the dashboards and the teams see it. */
function implied(before: StoredConversation, after: StoredConversation, facts: ChangeFacts = { actor }) {
  const implications = implicationsOf(before, after, facts);
  const writes = impliedWrites(ORG, [implications]);
  return {
    events: writes.flatMap(({ action }) => {
      const item = action.Put?.Item;
      return item?.entity === 'event' ? [{ type: item.type, data: eventDataOf(item) }] : [];
    }),
    audit: writes.flatMap(({ action }) => {
      const item = action.Put?.Item;
      if (item?.entity !== 'audit') return [];
      const { pk, sk, entity, id, conversationId, at, ...entry } = item;
      return [{ category: String(sk).split('#')[1], ...entry }];
    }),
    realtime: writes.flatMap(({ action }) =>
      action.Put?.Item?.entity === 'realtime' ? [action.Put.Item.type] : [],
    ),
    counters: writes.flatMap(({ action }) =>
      String(action.Update?.Key?.sk).startsWith('DAY#') ? [addsOf(action.Update)] : [],
    ),
    teams: writes.flatMap(({ action }) => {
      const write = action.Update ?? action.ConditionCheck;
      const sk = String(write?.Key?.sk);
      if (!sk.startsWith('TEAM#')) return [];
      return [
        { team: sk.slice('TEAM#'.length), delta: action.Update?.ExpressionAttributeValues?.[':delta'] ?? 0 },
      ];
    }),
    /** Operators the change must find before its transaction (read, not checked on their items). */
    operatorChecks: implications.operators,
    /** Actions on operator items: none, so assignments to one busy operator never queue on it. */
    operatorItemActions: writes.flatMap((write) => operatorItemOf(write)),
  };
}

/** The counters an Update adds: attribute name → amount. */
function addsOf(update: Write['action']['Update']): Record<string, number> {
  const names = update?.ExpressionAttributeNames ?? {};
  const values = update?.ExpressionAttributeValues ?? {};
  const adds = /ADD (.*)$/.exec(update?.UpdateExpression ?? '')?.[1]?.split(', ') ?? [];
  return Object.fromEntries(
    adds.map((clause) => {
      const [name = '', value = ''] = clause.split(' ');
      return [names[name] ?? name, values[value]];
    }),
  );
}

/** The operator item an action touches, if any. */
function operatorItemOf({ action }: Write) {
  const key = action.ConditionCheck?.Key ?? action.Update?.Key ?? action.Put?.Item;
  const sk = String(key?.sk);
  return sk.startsWith('OPERATOR#') ? [sk] : [];
}

describe('what a conversation change implies', () => {
  it('a close: conversation.updated and conversation.closed, the team one fewer open, no day counter in the transaction', () => {
    const before = conversation({ teamId: SUPPORT, operatorId: OPERATOR });
    const after = withChange(before, { status: 'closed' }, NOW);
    const { events, audit, counters, teams, realtime } = implied(before, after);
    expect(events.map((event) => event.type)).toEqual(['conversation.updated', 'conversation.closed']);
    expect(events[1]?.data).toMatchObject({ id: ids.conversation, status: 'closed', version: 2 });
    expect(audit).toEqual([]);
    expect(realtime).toEqual([]);
    // Counted from the stream (stats-stream.test.ts), never in the request's transaction.
    expect(counters).toEqual([]);
    expect(teams).toEqual([{ team: SUPPORT, delta: -1 }]);
  });

  it('an assignment: an ASSIGNMENT entry naming who did it, conversation.assigned, and the operator must exist', () => {
    const before = conversation();
    const after = withChange(before, { operatorId: OPERATOR }, NOW);
    const { events, audit, counters, teams, operatorChecks, operatorItemActions } = implied(before, after);
    expect(events.map((event) => event.type)).toEqual(['conversation.updated', 'conversation.assigned']);
    expect(audit).toEqual([
      {
        category: 'ASSIGNMENT',
        type: 'assigned',
        fromOperatorId: null,
        toOperatorId: OPERATOR,
        fromTeamId: null,
        teamId: null,
        actor,
      },
    ]);
    expect(operatorChecks).toEqual([OPERATOR]);
    expect(operatorItemActions).toEqual([]);
    expect(counters).toEqual([]);
    expect(teams).toEqual([]);
  });

  it('a reassignment across teams: a transfer in the history, one open conversation moves between the teams', () => {
    const before = conversation({ operatorId: OPERATOR, teamId: SUPPORT });
    const after = withChange(before, { operatorId: OTHER_OPERATOR, teamId: BILLING }, NOW);
    const { events, audit, teams, operatorChecks } = implied(before, after);
    expect(events.map((event) => event.type)).toEqual(['conversation.updated', 'conversation.assigned']);
    expect(audit).toEqual([
      {
        category: 'ASSIGNMENT',
        type: 'transferred',
        fromOperatorId: OPERATOR,
        toOperatorId: OTHER_OPERATOR,
        fromTeamId: SUPPORT,
        teamId: BILLING,
        actor,
      },
    ]);
    expect(operatorChecks).toEqual([OTHER_OPERATOR]);
    expect(teams).toEqual([
      { team: SUPPORT, delta: -1 },
      { team: BILLING, delta: 1 },
    ]);
  });

  it('a snooze: conversation.snoozed with its reason instead of conversation.updated, a SNOOZE entry, the operators notified', () => {
    const until = '2026-11-22T09:00:00.000Z';
    const before = conversation();
    const after = withChange(before, { status: 'snoozed', snoozedUntil: until }, NOW);
    const { events, audit, realtime, counters, teams } = implied(before, after, {
      actor,
      snoozeReason: 'Waiting for the courier',
    });
    expect(events.map((event) => event.type)).toEqual(['conversation.snoozed']);
    expect(events[0]?.data).toMatchObject({ status: 'snoozed', snoozeReason: 'Waiting for the courier' });
    expect(audit).toEqual([
      { category: 'SNOOZE', type: 'snoozed', until, reason: 'Waiting for the courier', actor },
    ]);
    expect(realtime).toEqual(['conversation_snoozed']);
    expect(counters).toEqual([]);
    expect(teams).toEqual([]);
    // Snoozed again to the same time, the request still records a snooze.
    const again = withChange(after, {}, NOW);
    expect(implied(after, again, { actor, snoozeReason: null }).events.map((event) => event.type)).toEqual([
      'conversation.snoozed',
    ]);
  });

  it('a deletion: conversation.deleted and a DELETION entry, the team one fewer open', () => {
    const survey = {
      surveyId: '019a7c1e-5e30-7f54-8a65-5b76c87d9c01',
      score: 4,
      day: '2026-11-21',
      operatorId: null,
    };
    const before = conversation({ teamId: SUPPORT, activeSurvey: survey });
    const after = withChange(before, { deletedAt: NOW }, NOW);
    const { events, audit, counters, teams } = implied(before, after);
    expect(events).toEqual([
      { type: 'conversation.deleted', data: { id: ids.conversation, deletedAt: NOW, version: 2 } },
    ]);
    expect(audit).toEqual([{ category: 'DELETION', type: 'conversation.deleted', actor }]);
    expect(counters).toEqual([]);
    expect(teams).toEqual([{ team: SUPPORT, delta: -1 }]);
  });

  it('nothing for a change no integrator sees (a read flag, an edited preview)', () => {
    const before = conversation({ unreadCount: 2, hasUnreadMessages: true });
    const after = { ...before, unreadCount: 0, hasUnreadMessages: false, updatedAt: NOW };
    expect(impliedWrites(ORG, [implicationsOf(before, after)])).toEqual([]);
  });

  it('refuses an audited change without its actor rather than record it as no one’s', () => {
    const before = conversation();
    expect(() => implicationsOf(before, withChange(before, { operatorId: OPERATOR }, NOW))).toThrow(/actor/);
  });

  it('a bulk close implies exactly what single closes imply, the team counts summed', () => {
    const one = conversation({ teamId: SUPPORT });
    const two = { ...conversation({ teamId: SUPPORT }), id: '019a7c1e-5e30-7f54-8a65-5b76c87d9b02' };
    const close = (current: StoredConversation) => withChange(current, { status: 'closed' }, NOW);
    const writes = impliedWrites(ORG, [
      implicationsOf(one, close(one), { actor }),
      implicationsOf(two, close(two), { actor }),
    ]);
    const types = writes.flatMap(({ action }) =>
      action.Put?.Item?.entity === 'event' ? [action.Put.Item.type] : [],
    );
    expect(types).toEqual([
      'conversation.updated',
      'conversation.closed',
      'conversation.updated',
      'conversation.closed',
    ]);
    const team = writes.filter(({ action }) => String(action.Update?.Key?.sk).startsWith('TEAM#'));
    expect(team.map(({ action }) => action.Update?.ExpressionAttributeValues?.[':delta'])).toEqual([-2]);
  });
});
