import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { operatorTeamProjection } from '../schemas/projections';
import type { OperatorTeam } from '../schemas/team';
import { db, tableName } from './client';
import { isConditionFailure } from './errors';
import { keys } from './keys';
import { project } from './project';
import { queryPrefix } from './query';
import { leaseFromWindow } from './rate-windows';
import { retryTransient, transact } from './transaction';
import { updateExpression } from './update-expression';

/**
 * Operator teams: one item per team in the organization's `TEAMS` partition (name, description,
 * priority, `memberIds` as a string set, absent when empty), and beside the organization a small
 * companion item per team (`keys.teamExists`) that conversations check their `teamId` against and
 * whose `openConversations` count (kept by `team-load.ts`) decides whether the team may go.
 */
export type { OperatorTeam };

/** Creations of teams per organization and minute (the contract's limit, shared by every credential). */
export const TEAM_CREATIONS_PER_MINUTE = 30;
/** The rate window's credential id: one window per organization and minute, whoever creates. */
export const TEAM_CREATE_WINDOW = 'TEAM_CREATE';
const WINDOW_MS = 60_000;

export interface CreationQuota {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

type RawItem = Record<string, AttributeValue>;

const toTeam = project<OperatorTeam>(operatorTeamProjection);

/** The team an item holds: `description` absent is null, `memberIds` (a string set, absent when empty) a list. */
function teamOf(item: Record<string, unknown>): OperatorTeam {
  const members = item.memberIds;
  return toTeam({
    ...item,
    description: item.description ?? null,
    priority: item.priority ?? 0,
    // Operator ids are UUIDv7: sorted, they are in the operators' creation order.
    memberIds: members instanceof Set ? [...(members as Set<string>)].sort() : [],
  });
}

/** A team from the raw item a failed condition returns (ALL_OLD is not unmarshalled). */
function teamOfRaw(item: RawItem): OperatorTeam {
  return teamOf({
    id: item.id?.S,
    orgId: item.orgId?.S,
    name: item.name?.S,
    description: item.description?.S,
    priority: Number(item.priority?.N ?? 0),
    memberIds: new Set(item.memberIds?.SS ?? []),
    createdAt: item.createdAt?.S,
    updatedAt: item.updatedAt?.S,
  });
}

/** A team write refused by one of its conditions, with the answer that condition means. */
class TeamRefusal extends Error {
  constructor(readonly result: DeleteTeamResult | AddMemberResult) {
    super('The team write was refused');
  }
}

export type DeleteTeamResult = 'deleted' | 'not_found' | { openConversations: number };
export type AddMemberResult = 'added' | 'team_not_found' | 'already_member' | 'operator_not_found';

export const teams = {
  /**
   * Takes one creation from the organization's window of the minute (the rate-window counter the
   * per-credential limit uses, under the id `TEAM_CREATE`): one conditional UpdateItem, exact
   * across instances.
   */
  async reserveCreation(orgId: string): Promise<CreationQuota> {
    const now = clock.nowMs();
    const windowStartMs = now - (now % WINDOW_MS);
    const { granted, used } = await leaseFromWindow({
      orgId,
      credentialId: TEAM_CREATE_WINDOW,
      windowStartMs,
      windowMs: WINDOW_MS,
      limit: TEAM_CREATIONS_PER_MINUTE,
      wanted: 1,
    });
    return {
      allowed: granted > 0,
      limit: TEAM_CREATIONS_PER_MINUTE,
      remaining: Math.max(0, TEAM_CREATIONS_PER_MINUTE - used),
      resetSeconds: Math.max(1, Math.ceil((windowStartMs + WINDOW_MS - now) / 1000)),
    };
  },

  /** One transaction: the team and its companion item (no open conversations yet). */
  async create(team: OperatorTeam): Promise<OperatorTeam> {
    const { memberIds: _none, description, ...rest } = team;
    await transact([
      {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.team(team.orgId, team.id),
            entity: 'team',
            ...rest,
            ...(description !== null ? { description } : {}),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.teamExists(team.orgId, team.id),
            entity: 'teamLoad',
            teamId: team.id,
            openConversations: 0,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ]);
    return { ...team, memberIds: [] };
  },

  /** Every team of the organization, in creation order: one Query per 1 MB page (strongly consistent). */
  async all(orgId: string): Promise<OperatorTeam[]> {
    const items = await queryPrefix(keys.teamsPartition(orgId), keys.teamPrefix, { consistent: true });
    return items.map(teamOf);
  },

  async get(orgId: string, teamId: string): Promise<OperatorTeam | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.team(orgId, teamId), ConsistentRead: true }),
    );
    return Item ? teamOf(Item) : undefined;
  },

  /**
   * Writes the given fields in one UpdateItem, conditioned on one of them differing from the
   * stored value (an absent attribute differs from any value): a body that changes nothing writes
   * nothing (the old item comes back with the failed condition, so that costs no extra read either).
   * A null `description` removes it. Undefined when there is no such team.
   */
  async update(
    orgId: string,
    teamId: string,
    changes: { name?: string; description?: string | null; priority?: number },
  ): Promise<OperatorTeam | undefined> {
    const set = {
      name: changes.name,
      priority: changes.priority,
      description: changes.description ?? undefined,
    };
    const written = Object.entries(set).flatMap(([name, value]) => (value === undefined ? [] : [name]));
    const removed = changes.description === null ? ['description'] : [];
    if (written.length === 0 && removed.length === 0) return teams.get(orgId, teamId);
    const update = updateExpression(
      { set: { ...set, updatedAt: clock.nowIso() }, remove: removed },
      {
        // One flat OR in one pair of parentheses: DynamoDB refuses redundant ones.
        expression: (at) => {
          const differs = [
            ...written.map(
              (name) => `attribute_not_exists(${at.name(name)}) OR ${at.name(name)} <> ${at.value(name)}`,
            ),
            ...removed.map((name) => `attribute_exists(${at.name(name)})`),
          ];
          return `attribute_exists(pk) AND (${differs.join(' OR ')})`;
        },
      },
    );
    try {
      const { Attributes } = await retryTransient(() =>
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.team(orgId, teamId),
            ...update,
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return Attributes ? teamOf(Attributes) : undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const old = (error as { Item?: RawItem }).Item;
      return old ? teamOfRaw(old) : undefined;
    }
  },

  /**
   * One transaction: the team goes, and its companion item becomes a tombstone, both only while
   * the team holds no open conversation. An assignment racing the deletion either commits first
   * (the deletion is refused) or meets the tombstone (the assignment is 422).
   */
  async remove(orgId: string, teamId: string): Promise<DeleteTeamResult> {
    try {
      await transact([
        {
          action: {
            Delete: {
              TableName: tableName,
              Key: keys.team(orgId, teamId),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
          onConditionFailed: () => new TeamRefusal('not_found'),
        },
        {
          action: {
            Update: {
              TableName: tableName,
              Key: keys.teamExists(orgId, teamId),
              UpdateExpression: 'SET deletedAt = :now',
              ConditionExpression:
                'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND (attribute_not_exists(openConversations) OR openConversations = :zero)',
              ExpressionAttributeValues: { ':now': clock.nowIso(), ':zero': 0 },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          onConditionFailed: (load) => {
            const open = Number(load?.openConversations ?? 0);
            return new TeamRefusal(
              load && !load.deletedAt && open > 0 ? { openConversations: open } : 'not_found',
            );
          },
        },
      ]);
      return 'deleted';
    } catch (error) {
      if (error instanceof TeamRefusal) return error.result as DeleteTeamResult;
      throw error;
    }
  },

  /**
   * One transaction: the operator joins the team's `memberIds` unless already there, and the
   * operator must be of the organization. Two adds of one operator at once: one is cancelled, tries
   * again and meets the other's member (409).
   */
  async addMember(orgId: string, teamId: string, operatorId: string): Promise<AddMemberResult> {
    try {
      await transact([
        {
          action: {
            Update: {
              TableName: tableName,
              Key: keys.team(orgId, teamId),
              UpdateExpression: 'ADD memberIds :member SET updatedAt = :now',
              ConditionExpression: 'attribute_exists(pk) AND NOT contains(memberIds, :operatorId)',
              ExpressionAttributeValues: {
                ':member': new Set([operatorId]),
                ':operatorId': operatorId,
                ':now': clock.nowIso(),
              },
              // Present: the team exists, so the operator is already a member; absent: no team.
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          onConditionFailed: (team) => new TeamRefusal(team ? 'already_member' : 'team_not_found'),
        },
        {
          action: {
            ConditionCheck: {
              TableName: tableName,
              Key: keys.operator(orgId, operatorId),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
          onConditionFailed: () => new TeamRefusal('operator_not_found'),
        },
      ]);
      return 'added';
    } catch (error) {
      if (error instanceof TeamRefusal) return error.result as AddMemberResult;
      throw error;
    }
  },

  /** One UpdateItem that holds only while the operator is a member: false otherwise (or no team). */
  async removeMember(orgId: string, teamId: string, operatorId: string): Promise<boolean> {
    try {
      await retryTransient(() =>
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.team(orgId, teamId),
            UpdateExpression: 'DELETE memberIds :member SET updatedAt = :now',
            ConditionExpression: 'contains(memberIds, :operatorId)',
            ExpressionAttributeValues: {
              ':member': new Set([operatorId]),
              ':operatorId': operatorId,
              ':now': clock.nowIso(),
            },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },
};
