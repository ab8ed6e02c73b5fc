/**
 * Who is calling, resolved from the credential alone. The organization of every org-level caller
 * comes from here and nowhere else: no handler reads an org id from input.
 */
export type OperatorRole = 'admin' | 'operator';

export interface ApiKeyCaller {
  kind: 'apiKey';
  orgId: string;
  credentialId: string;
  /** Empty means unrestricted. */
  scopes: readonly string[];
  /** The key's name, shown as the author of what the key writes (internal notes). */
  name: string;
}

export interface OperatorCaller {
  kind: 'operator';
  orgId: string;
  credentialId: string;
  operatorId: string;
  role: OperatorRole;
  /** Set when the platform admin acts as this operator (impersonation): every request is audited. */
  impersonatedBy?: string;
}

export interface VisitorCaller {
  kind: 'visitor';
  orgId: string;
  credentialId: string;
  visitorId: string;
}

export interface WidgetCaller {
  kind: 'widget';
  orgId: string;
  credentialId: string;
}

export interface PlatformCaller {
  kind: 'platform';
  credentialId: 'platform-admin';
}

export interface PublicCaller {
  kind: 'public';
}

export type Caller =
  | ApiKeyCaller
  | OperatorCaller
  | VisitorCaller
  | WidgetCaller
  | PlatformCaller
  | PublicCaller;
export type CallerKind = Caller['kind'];
export type OrgCaller = ApiKeyCaller | OperatorCaller | VisitorCaller | WidgetCaller;
export type CallerOf<K extends CallerKind> = Extract<Caller, { kind: K }>;

/** The name integrators see in `GET /api/me`. */
export const callerTypeNames = { apiKey: 'api_key', operator: 'operator', visitor: 'visitor' } as const;
