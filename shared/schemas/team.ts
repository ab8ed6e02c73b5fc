import { isoInstant, offsetPage, offsetQuery, plainText, uuid } from './common';
import { lazily, named } from './names';
import { operatorRole } from './organization';
import * as z from './zod';

/** Routing order: a conversation goes to the team with the highest priority first. */
export const TEAM_PRIORITY_MAX = 100;

export const operatorTeam = named('OperatorTeam', () =>
  z.object({
    id: uuid,
    orgId: uuid,
    name: z.string(),
    description: z.nullable(z.string()),
    /** 0–100; higher routes first. */
    priority: z.int().check(z.minimum(0), z.maximum(TEAM_PRIORITY_MAX)),
    /** The member operators' ids, in creation order of the operators. */
    memberIds: z.array(uuid),
    createdAt: isoInstant,
    updatedAt: isoInstant,
  }),
);
export type OperatorTeam = z.infer<typeof operatorTeam>;

export const operatorTeamPage = named('OperatorTeamPage', () => offsetPage(operatorTeam));

/* ---------------------------------------------------------------- requests */

const teamName = z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText());
const teamDescription = z.nullable(z.string().check(z.trim(), z.maxLength(2000), plainText()));
const teamPriority = z.int().check(z.minimum(0), z.maximum(TEAM_PRIORITY_MAX));

export const createTeamBody = named('CreateOperatorTeamRequest', () =>
  z.strictObject({
    name: teamName,
    /** Default null. */
    description: z.optional(teamDescription),
    /** Default 0. */
    priority: z.optional(teamPriority),
  }),
);
export type CreateTeamInput = z.infer<typeof createTeamBody>;

export const updateTeamBody = named('UpdateOperatorTeamRequest', () =>
  z.strictObject({
    name: z.optional(teamName),
    /** null clears it. */
    description: z.optional(teamDescription),
    priority: z.optional(teamPriority),
  }),
);
export type UpdateTeamInput = z.infer<typeof updateTeamBody>;

export const addMemberBody = named('AddTeamMemberRequest', () => z.strictObject({ operatorId: uuid }));

export const teamParams = lazily(() => z.strictObject({ id: uuid }));
export const memberParams = lazily(() => z.strictObject({ id: uuid, operatorId: uuid }));
export const listTeamsQuery = lazily(() => z.strictObject(offsetQuery));

/* ---------------------------------------------------------------- operators */

export const operatorWithTeams = named('OperatorWithTeams', () =>
  z.object({
    id: uuid,
    orgId: uuid,
    name: z.string(),
    email: z.string(),
    role: operatorRole,
    /** The teams the operator is a member of. */
    teamIds: z.array(uuid),
    createdAt: isoInstant,
  }),
);
export type OperatorWithTeams = z.infer<typeof operatorWithTeams>;

export const operatorPage = named('OperatorPage', () => offsetPage(operatorWithTeams));

export const listOperatorsQuery = lazily(() =>
  z.strictObject({ ...offsetQuery, role: z.optional(operatorRole) }),
);
