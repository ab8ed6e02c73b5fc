import type { $ZodType } from 'zod/v4/core';
import { scopes } from '../auth/scopes';
import { documented, lazily } from './names';
import * as z from './zod';

/**
 * What `error.details` holds, per error code: the one statement of it. The error classes
 * (shared/errors.ts) take their details typed from these schemas, so a field or a reason that is
 * not declared here does not compile where it is thrown; the OpenAPI document states them as each
 * status's `details` (closed objects, so a generated client knows every field). Codes absent here
 * carry no details. Only the document builds them: throwing code imports the types alone.
 */

const described = <T extends $ZodType>(schema: T, description: string): T =>
  documented(schema, { description });

const count = (description: string) =>
  described(z.int().check(z.minimum(0), z.maximum(2 ** 31 - 1)), description);

/** A dotted path into the request (`translations.1.locale`, `messageIds.3`). */
const field = (description: string) => described(z.string().check(z.maxLength(200)), description);

export const errorDetailsSchemas = {
  BAD_REQUEST: lazily(() =>
    z.strictObject({
      field: z.optional(field('The offending input: `cursor`')),
      maxDepth: z.optional(
        described(z.int().check(z.minimum(1), z.maximum(1000)), 'The nesting a body may not exceed'),
      ),
    }),
  ),
  INTEGRATION_MODULE_REQUIRED: lazily(() =>
    z.strictObject({
      module: described(z.string().check(z.maxLength(64)), 'The module the organization lacks'),
      feature: described(z.string().check(z.maxLength(100)), 'The feature that needs it'),
    }),
  ),
  FORBIDDEN: lazily(() =>
    z.strictObject({
      reason: z.optional(
        described(
          z.enum(['outside_history_window']),
          'The conversation is older than the organization’s history window',
        ),
      ),
      historyWindowDays: z.optional(
        described(
          z.int().check(z.minimum(1), z.maximum(36_500)),
          'With `outside_history_window`: the days of history the organization may read',
        ),
      ),
      requiredScope: z.optional(described(z.enum(scopes), 'The scope this API key lacks')),
      requiredRole: z.optional(
        described(z.enum(['admin']), 'The operator role this endpoint needs (admin-only endpoints)'),
      ),
    }),
  ),
  NOT_FOUND: lazily(() =>
    z.strictObject({
      ids: z.optional(
        described(
          z.array(z.string().check(z.maxLength(100))).check(z.maxLength(500)),
          'Bulk calls: the ids that name nothing in the organization (or in the conversation)',
        ),
      ),
    }),
  ),
  METHOD_NOT_ALLOWED: lazily(() =>
    z.strictObject({
      allowed: described(
        z.array(z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])).check(z.maxLength(5)),
        'The methods this path accepts (also in `Allow`)',
      ),
    }),
  ),
  CONFLICT: lazily(() =>
    z.strictObject({
      reason: z.optional(
        described(
          z.enum([
            'idempotency_key_reused',
            'idempotency_in_progress',
            'edit_window_expired',
            'name_taken',
            'key_taken',
            'slug_taken',
            'custom_field_budget_exceeded',
            'knowledge_base_budget_exceeded',
            'collection_not_empty',
            'already_member',
            'team_has_open_conversations',
            'channel_exists',
            'channel_limit_reached',
            'not_failed',
            'not_uploaded',
            'already_merged',
            'same_visitor',
            'visitor_erased',
          ]),
          'What the request conflicts with',
        ),
      ),
      field: z.optional(field('The input that names what already exists (`email`, `channelId`)')),
      surveyId: z.optional(described(z.uuid(), 'The visitor’s active survey response for this conversation')),
      articles: z.optional(count('With `collection_not_empty`: the articles the collection still holds')),
      openConversations: z.optional(
        count(
          'With `team_has_open_conversations`: the conversations not closed that are assigned to the team',
        ),
      ),
    }),
  ),
  PRECONDITION_FAILED: lazily(() =>
    z.strictObject({
      currentVersion: described(
        z.int().check(z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)),
        'The version the resource has now: read it again, or retry with this in `If-Match`',
      ),
    }),
  ),
  PAYLOAD_TOO_LARGE: lazily(() =>
    z.strictObject({ limitBytes: count('The largest body accepted, in bytes') }),
  ),
  VALIDATION_ERROR: lazily(() =>
    z.strictObject({
      field: field('The first offending field, as a dotted path'),
      reason: z.optional(
        described(
          z.enum([
            'row_limit_exceeded',
            'locale_not_enabled',
            'too_large',
            'definition_too_large',
            'config_too_large',
            'collection_not_found',
            'search_published_only',
            'channel_not_found',
            'channel_not_accessible',
            'invalid_url',
            'credentials_in_url',
            'https_required',
            'non_public_address',
            'unresolvable',
            'size_mismatch',
            'type_mismatch',
          ]),
          'Why the value is refused, when its message is not all there is to it',
        ),
      ),
      limit: z.optional(count('With `row_limit_exceeded`: the most conversations one export may match')),
      offset: z.optional(
        count('With a search query (`q`): the character offset, from 0, where the query goes wrong'),
      ),
    }),
  ),
  RATE_LIMITED: lazily(() =>
    z.strictObject({
      retryAfterSeconds: described(
        z.int().check(z.minimum(0), z.maximum(86_400)),
        'Seconds to wait (also in `Retry-After`)',
      ),
      reason: z.optional(
        described(
          z.enum(['transcript_email_limit', 'organization_rate_limit']),
          'Set when an organization-wide limit refused it rather than the credential’s',
        ),
      ),
    }),
  ),
  UPSTREAM_ERROR: lazily(() =>
    z.strictObject({
      service: described(z.enum(['discord']), 'The third-party service that failed'),
      status: z.optional(
        described(z.int().check(z.minimum(100), z.maximum(599)), 'The HTTP status it answered'),
      ),
      reason: z.optional(
        described(
          z.string().check(z.maxLength(500)),
          'Why no answer came, when none did (e.g. `timeout`, `connection_closed`)',
        ),
      ),
    }),
  ),
};

export type ErrorDetailsSchemas = typeof errorDetailsSchemas;
