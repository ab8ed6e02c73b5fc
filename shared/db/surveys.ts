import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dayOf } from '../analytics/days';
import { clock } from '../clock';
import type { ActiveSurvey, StoredConversation } from '../conversations/state';
import { ConflictError, NotFoundError } from '../errors';
import { uuidv7 } from '../ids';
import { sanitizeText } from '../sanitize/text';
import { surveyProjection } from '../schemas/projections';
import type { Survey } from '../schemas/survey';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { storedConversationOf } from './conversation-item';
import { mutate } from './conversation-mutate';
import { conditionHeld } from './errors';
import { keys } from './keys';
import { project } from './project';
import { childrenQuery, offsetPage } from './query';
import type { Write } from './transaction';

export type { Survey };

export const toSurvey: (item: object) => Survey = project<Survey>(surveyProjection);

/**
 * Survey responses live in their conversation's partition (a conversation's responses are one
 * Query), with a small locator item per id for the routes that name only the survey, and, while
 * active, an entry in the organization's by-time index (gsi1) for the analytics export. The response
 * that counts in CSAT is recorded on the conversation itself (`activeSurvey`), written on `rev` like
 * every conversation change: that is the "one active response per conversation and visitor" guard
 * (a conversation has one visitor), and what a deletion of either subtracts from the aggregates.
 */

/** The deactivation found the response already inactive: nothing to do. */
class AlreadyInactiveError extends Error {}

function deactivation(orgId: string, conversationId: string, surveyId: string, now: string): Write {
  return {
    action: {
      Update: {
        TableName: tableName,
        Key: keys.survey(orgId, conversationId, surveyId),
        // Out of the by-time index too: it lists the responses that count.
        UpdateExpression:
          'SET isActive = :false, deactivatedAt = :now, updatedAt = :now REMOVE gsi1pk, gsi1sk',
        ConditionExpression: 'isActive = :true',
        ExpressionAttributeValues: { ':false': false, ':true': true, ':now': now },
      },
    },
    onConditionFailed: () => new AlreadyInactiveError(),
  };
}

export const surveys = {
  /**
   * One transaction on the conversation's `rev`: the response, its locator, the conversation's
   * `activeSurvey` (from which the stream moves the CSAT counters of today and of the conversation's
   * operator: stats-stream.ts). A response
   * already active is 409 (two racing creates: one commits, the other re-reads and meets it).
   * `check` applies the caller's rules to every state read; a missing conversation is NotFoundError.
   */
  create(
    orgId: string,
    input: { conversationId: string; score: number; comment?: string | undefined },
    check: (conversation: StoredConversation) => void,
  ): Promise<Survey> {
    const comment = input.comment === undefined ? null : sanitizeText(input.comment) || null;
    return mutate(
      orgId,
      input.conversationId,
      (current) => {
        if (current.activeSurvey)
          throw new ConflictError('This conversation’s visitor already has an active survey response', {
            surveyId: current.activeSurvey.surveyId,
          });
        const now = clock.nowIso();
        const created: Survey = {
          id: uuidv7(),
          orgId,
          conversationId: current.id,
          visitorId: current.visitorId,
          operatorId: current.operatorId,
          score: input.score,
          comment,
          isActive: true,
          createdAt: now,
          updatedAt: now,
          deactivatedAt: null,
        };
        const active: ActiveSurvey = {
          surveyId: created.id,
          score: created.score,
          day: dayOf(now),
          operatorId: created.operatorId,
        };
        return {
          // Not a change of the conversation resource: `rev` moves, `version` and `updatedAt` stay.
          next: { ...current, activeSurvey: active },
          writes: [
            {
              action: {
                Put: {
                  TableName: tableName,
                  Item: {
                    ...keys.survey(orgId, current.id, created.id),
                    ...keys.surveyByTime(orgId, created.createdAt, current.id, created.id),
                    entity: 'survey',
                    ...created,
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            },
            {
              action: {
                Put: {
                  TableName: tableName,
                  Item: {
                    ...keys.surveyLocator(orgId, created.id),
                    entity: 'surveyLocator',
                    conversationId: current.id,
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            },
          ],
          result: created,
        };
      },
      { check },
    );
  },

  /**
   * Soft delete: `isActive` false, and when the response counts in CSAT, the conversation's
   * `activeSurvey` cleared (the stream then subtracts it from the counters of its day and operator),
   * in one transaction on the conversation's `rev`. Repeating succeeds without writing. A response
   * whose conversation was deleted no longer counts (the deletion subtracted it): only the record
   * changes. False when there is no such response; `check` may refuse the caller (thrown).
   */
  async deactivate(orgId: string, surveyId: string, check: (survey: Survey) => void): Promise<boolean> {
    const conversationId = await locate(orgId, surveyId);
    if (!conversationId) return false;
    const surveyKey = keys.survey(orgId, conversationId, surveyId);
    const conversationKey = keys.conversation(orgId, conversationId);
    const items = await batchGet([conversationKey, surveyKey], { consistent: true });
    const surveyItem = items.find((item) => item.sk === surveyKey.sk);
    if (!surveyItem) return false;
    const found = toSurvey(surveyItem);
    check(found);
    if (!found.isActive) return true;
    const conversationItem = items.find((item) => item.sk === conversationKey.sk);
    const now = clock.nowIso();
    const recordOnly = async () => {
      const write = deactivation(orgId, conversationId, surveyId, now).action.Update;
      if (write) await conditionHeld(() => db.send(new UpdateCommand(write)));
      return true;
    };
    if (!conversationItem || conversationItem.deletedAt) return recordOnly();
    try {
      return await mutate(
        orgId,
        conversationId,
        (current) => {
          const counted = current.activeSurvey?.surveyId === surveyId ? current.activeSurvey : null;
          return {
            next: counted ? { ...current, activeSurvey: null } : undefined,
            writes: [deactivation(orgId, conversationId, surveyId, now)],
            result: true,
          };
        },
        { initial: storedConversationOf(conversationItem) },
      );
    } catch (error) {
      if (error instanceof AlreadyInactiveError) return true;
      // Deleted meanwhile: its deletion took the response out of the counters.
      if (error instanceof NotFoundError) return recordOnly();
      throw error;
    }
  },

  /** A page of a conversation's responses, newest first, and how many it has (see `offsetPage`). */
  async list(
    orgId: string,
    conversationId: string,
    offset: number,
    limit: number,
  ): Promise<{ data: Survey[]; total: number }> {
    const { items, total } = await offsetPage(
      {
        ...childrenQuery(keys.conversationPartition(orgId, conversationId), keys.surveyPrefix),
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      offset,
      limit,
    );
    return { data: items.map(toSurvey), total };
  },
};

/** The conversation a response belongs to, from its locator (strongly consistent). */
async function locate(orgId: string, surveyId: string): Promise<string | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: keys.surveyLocator(orgId, surveyId), ConsistentRead: true }),
  );
  return typeof Item?.conversationId === 'string' ? Item.conversationId : undefined;
}
