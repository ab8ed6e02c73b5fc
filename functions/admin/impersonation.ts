import { authCache } from '../../shared/auth/authenticate';
import type { CallerOf } from '../../shared/auth/caller';
import { parseOrgToken } from '../../shared/auth/tokens';
import { config, configDefaults } from '../../shared/config';
import { credentials } from '../../shared/db/credentials';
import { operators } from '../../shared/db/operators';
import { auditActorOf } from '../../shared/db/org-audit';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { isoInstant, successResult, uuid } from '../../shared/schemas/common';
import { named } from '../../shared/schemas/names';
import * as z from '../../shared/schemas/zod';

export const IMPERSONATION_COOKIE = 'svc_impersonation';
/** What every answer sets on the cookie: never readable by scripts, never sent cross-site or over http. */
const COOKIE_ATTRIBUTES = 'HttpOnly; Secure; SameSite=Strict; Path=/';
const COOKIE_PATTERN = '^svc_os_[A-Za-z0-9_-]{1,200}$';

const impersonationStarted = named(
  'ImpersonationStarted',
  () => z.object({ success: z.boolean(), expiresAt: isoInstant }),
  'The session is in the `svc_impersonation` cookie (an operator session token, `svc_os_…`).',
);

/** The `svc_impersonation` value of a Cookie header, if any. */
export function impersonationCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() === IMPERSONATION_COOKIE) {
      const value = part.slice(at + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/**
 * Ends the impersonation session a cookie holds, server-side, and audits it; nothing when the
 * cookie holds no live impersonation session (ended, forged, or an ordinary session).
 */
async function endSessionOf(cookie: string | undefined, caller: CallerOf<'platform'>): Promise<void> {
  const parsed = cookie ? parseOrgToken(cookie) : undefined;
  if (parsed?.kind !== 'operatorSession') return;
  const ended = await credentials.endImpersonation(parsed.orgId, parsed.credentialId, parsed.hash, {
    ...auditActorOf(caller),
    type: 'impersonation.stopped',
    target: { type: 'operator_session', id: parsed.credentialId },
  });
  if (ended) authCache.forgetCredential(parsed.credentialId);
}

export const impersonateOperator = route({
  method: 'POST',
  path: '/api/admin/users/{id}/impersonate',
  operationId: 'impersonateOperator',
  summary: 'Act as an operator',
  description: `Mints an operator session for the operator \`id\` (any organization), valid \`IMPERSONATION_TTL_MINUTES\` (default and at most ${configDefaults.impersonationTtlMinutes}) minutes at most, and sets it in the \`${IMPERSONATION_COOKIE}\` cookie (\`${COOKIE_ATTRIBUTES}\`) for the dashboard. Used as a bearer token it acts as that operator, with the operator's role; every request made with it is written to the organization's audit trail with the platform admin as the actor, and so are the start and the end of the session. A session a cookie sent with this request still holds is ended first. An id that is not an operator's (a visitor's, an unknown one) is 404.`,
  tag: 'Impersonation',
  callers: ['platform'],
  params: z.strictObject({ id: uuid }),
  cookie: {
    name: IMPERSONATION_COOKIE,
    description: 'An impersonation session still held: it is ended before the new one starts',
    sets: true,
    reads: true,
    pattern: COOKIE_PATTERN,
  },
  response: {
    status: 200,
    schema: impersonationStarted,
    description: 'Impersonating; the session is in the cookie',
  },
  errors: [404],
  examples: { response: { success: true, expiresAt: '2026-11-21T11:00:00.000Z' } },
  handle: async ({ caller, params, headers }) => {
    const orgId = await operators.organizationOf(params.id);
    const operator = orgId ? await operators.get(orgId, params.id) : undefined;
    if (!orgId || !operator) throw new NotFoundError('Operator not found');
    await endSessionOf(impersonationCookie(headers.cookie), caller);
    const ttlMs = config.impersonationTtlMinutes * 60_000;
    const session = await credentials.createImpersonationSession(
      orgId,
      { id: operator.id, role: operator.role },
      caller.credentialId,
      ttlMs,
      {
        ...auditActorOf(caller),
        type: 'impersonation.started',
        target: { type: 'operator', id: operator.id },
        details: { impersonatedOperatorId: operator.id },
      },
    );
    return ok(
      { success: true, expiresAt: session.expiresAt },
      {
        'Set-Cookie': `${IMPERSONATION_COOKIE}=${session.token}; ${COOKIE_ATTRIBUTES}; Max-Age=${ttlMs / 1000}; Expires=${new Date(session.expiresAt).toUTCString()}`,
      },
    );
  },
});

export const stopImpersonation = route({
  method: 'POST',
  path: '/api/admin/users/stop-impersonation',
  operationId: 'stopImpersonation',
  summary: 'Stop acting as an operator',
  description: `Ends the impersonation session the \`${IMPERSONATION_COOKIE}\` cookie holds, server-side (its token is 401 from then on, everywhere at once) and in the audit trail, and clears the cookie (\`Max-Age=0\`). Without such a session there is nothing to end: still a success, and the cookie is cleared.`,
  tag: 'Impersonation',
  callers: ['platform'],
  cookie: {
    name: IMPERSONATION_COOKIE,
    description: 'The impersonation session to end',
    sets: true,
    reads: true,
    pattern: COOKIE_PATTERN,
  },
  response: { status: 200, schema: successResult, description: 'Ended; the cookie is cleared' },
  examples: { response: { success: true } },
  handle: async ({ caller, headers }) => {
    await endSessionOf(impersonationCookie(headers.cookie), caller);
    return ok(
      { success: true },
      {
        'Set-Cookie': `${IMPERSONATION_COOKIE}=; ${COOKIE_ATTRIBUTES}; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`,
      },
    );
  },
});
