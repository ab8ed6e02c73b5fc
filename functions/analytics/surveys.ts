import { surveys } from '../../shared/db/surveys';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { paginationOf, successResult } from '../../shared/schemas/common';
import { examplePage, surveyExample } from '../../shared/schemas/examples';
import {
  createSurveyBody,
  listSurveysQuery,
  survey,
  surveyPage,
  surveyParams,
} from '../../shared/schemas/survey';
import { accessRules, loadConversation } from '../conversations/access';

export const createSurvey = route({
  method: 'POST',
  path: '/api/surveys',
  operationId: 'createSurvey',
  summary: 'Record a survey (CSAT) response',
  description:
    'A satisfaction score of a conversation from its visitor: a visitor answers for their own conversation; an API key or an operator names the visitor with `visitorId`, which must be the conversation’s visitor (422 `visitorId` otherwise). `score` is an integer 1–5; `comment` is optional plain text (sanitized; at most 2,000 characters). A conversation that is not the organization’s (or not the visitor’s) is 422 `conversationId`. At most one active response per conversation and visitor: while one exists the answer is 409 (also when two requests race); delete it first to record a new one. The response counts in CSAT on the day it is given, credited to the conversation’s operator at that moment.',
  tag: 'Surveys',
  scope: 'surveys:write',
  callers: ['apiKey', 'operator', 'visitor'],
  body: createSurveyBody,
  response: { status: 201, schema: survey, description: 'The response' },
  errors: [409],
  examples: {
    request: {
      conversationId: surveyExample.conversationId,
      visitorId: surveyExample.visitorId,
      score: surveyExample.score,
      comment: surveyExample.comment ?? undefined,
    },
    response: surveyExample,
  },
  handle: async ({ caller, organization, body }) => {
    if (caller.kind === 'visitor') {
      if (body.visitorId !== undefined && body.visitorId !== caller.visitorId)
        throw ValidationError.field('visitorId', 'Visitors answer only for themselves');
    } else if (body.visitorId === undefined) {
      throw ValidationError.field('visitorId', 'Name the conversation’s visitor who gave the response');
    }
    const rules = accessRules(caller, organization);
    try {
      const recorded = await surveys.create(caller.orgId, body, (conversation) => {
        rules(conversation);
        if (body.visitorId !== undefined && body.visitorId !== conversation.visitorId)
          throw ValidationError.field('visitorId', 'visitorId must be the conversation’s visitor');
      });
      return created(recorded);
    } catch (error) {
      if (error instanceof NotFoundError)
        throw ValidationError.field('conversationId', 'No such conversation in this organization');
      throw error;
    }
  },
});

export const listSurveys = route({
  method: 'GET',
  path: '/api/surveys',
  operationId: 'listSurveys',
  summary: 'List a conversation’s survey responses',
  description:
    'Every response of one conversation, active and deleted, newest first, as an offset page. A conversation of another organization, or deleted, is 404.',
  tag: 'Surveys',
  scope: 'surveys:read',
  callers: ['apiKey', 'operator'],
  query: listSurveysQuery,
  response: { status: 200, schema: surveyPage, description: 'A page of responses' },
  errors: [404],
  examples: { response: examplePage(surveyExample) },
  handle: async ({ caller, organization, query }) => {
    // The conversation's read (tenancy, deletion, history window) and the page share one round trip.
    const listed = surveys.list(caller.orgId, query.conversationId, query.offset, query.limit);
    listed.catch(() => undefined);
    await loadConversation(caller, organization, query.conversationId);
    const { data, total } = await listed;
    return ok({ data, pagination: paginationOf(query.offset, query.limit, total) });
  },
});

export const deleteSurvey = route({
  method: 'DELETE',
  path: '/api/surveys/{id}',
  operationId: 'deleteSurvey',
  summary: 'Delete a survey response',
  description:
    'A soft delete: the response stays stored with `isActive` false and no longer counts in CSAT. Repeating it succeeds. Afterwards the visitor may give a new response for the same conversation. A visitor may delete only their own responses (another’s is 404).',
  tag: 'Surveys',
  scope: 'surveys:write',
  callers: ['apiKey', 'operator', 'visitor'],
  params: surveyParams,
  response: { status: 200, schema: successResult, description: 'Deleted' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    const found = await surveys.deactivate(caller.orgId, params.id, (response) => {
      if (caller.kind === 'visitor' && response.visitorId !== caller.visitorId)
        throw new NotFoundError('Survey response not found');
    });
    if (!found) throw new NotFoundError('Survey response not found');
    return ok({ success: true });
  },
});
