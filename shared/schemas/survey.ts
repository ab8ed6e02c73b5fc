import { idParams, isoInstant, offsetPage, offsetQuery, plainText, uuid } from './common';
import { documented, lazily, named } from './names';
import * as z from './zod';

/** A survey (CSAT) response of a conversation's visitor. */
export const survey = named('Survey', () =>
  z.object({
    id: uuid,
    orgId: uuid,
    conversationId: uuid,
    /** The conversation's visitor, who gave the response. */
    visitorId: uuid,
    /** The conversation's operator when the response was given (credited in CSAT `byOperator`). */
    operatorId: z.nullable(uuid),
    /** 1 (very unsatisfied) to 5 (very satisfied). */
    score: z.int(),
    comment: z.nullable(z.string()),
    /** False once deleted (a soft delete: the record stays). Only active responses count in CSAT. */
    isActive: z.boolean(),
    createdAt: isoInstant,
    updatedAt: isoInstant,
    /** When it was deleted; null while active. */
    deactivatedAt: z.nullable(isoInstant),
  }),
);
export type Survey = z.infer<typeof survey>;

export const createSurveyBody = named('CreateSurveyRequest', () =>
  z.strictObject({
    conversationId: uuid,
    /** Required of API keys and operators: the conversation's visitor. A visitor may omit it. */
    visitorId: z.optional(uuid),
    score: z.int().check(z.minimum(1), z.maximum(5)),
    comment: z.optional(z.string().check(z.trim(), z.maxLength(2_000), plainText())),
  }),
);
export type CreateSurveyInput = z.infer<typeof createSurveyBody>;

export const surveyParams = idParams;

export const listSurveysQuery = lazily(() => z.strictObject({ conversationId: uuid, ...offsetQuery }));

export const surveyPage = named('SurveyPage', () => offsetPage(survey));

export const csatPeriods = ['7d', '30d', '90d'] as const;
export type CsatPeriod = (typeof csatPeriods)[number];

export const csatQuery = lazily(() => z.strictObject({ period: z._default(z.enum(csatPeriods), '30d') }));

const score = z.int();

export const csatReport = named('CsatReport', () =>
  z.object({
    period: z.enum(csatPeriods),
    /** Mean score of the period's active responses; null with none. */
    averageScore: z.nullable(z.number()),
    totalResponses: z.int(),
    /** Responses ÷ conversations closed in the period, 0–1 (0 when none closed). */
    responseRate: z.number(),
    /** Responses per score. */
    distribution: z.object({ '1': score, '2': score, '3': score, '4': score, '5': score }),
    /** Operators credited with responses in the period, most responses first. */
    byOperator: z.array(z.object({ operatorId: uuid, averageScore: z.number(), responses: z.int() })),
    /** Every UTC day of the period, oldest first. */
    daily: z.array(
      z.object({
        date: documented(z.string(), { format: 'date' }),
        averageScore: z.nullable(z.number()),
        responses: z.int(),
      }),
    ),
  }),
);
export type CsatReport = z.infer<typeof csatReport>;

/** An instant (any offset, any precision) or a calendar date (its UTC midnight). */
const instantOrDate = lazily(() =>
  z.union([z.iso.datetime({ offset: true }).check(z.maxLength(35)), z.iso.date().check(z.maxLength(10))]),
);

export const analyticsExportQuery = lazily(() =>
  z.strictObject({
    format: z._default(z.enum(['csv']), 'csv'),
    date_from: documented(z.optional(instantOrDate), {
      description:
        'Start of the window, included: an ISO 8601 instant, or a date (its UTC midnight). Default: `date_to` − 30 days',
    }),
    date_to: documented(z.optional(instantOrDate), {
      description:
        'End of the window, excluded: an ISO 8601 instant, or a date (its UTC midnight). Default: the request time',
    }),
    granularity: documented(z.optional(z.enum(['day'])), {
      description: '`day` adds, after the window’s rows, the same metrics for each UTC day of the window',
    }),
  }),
);
