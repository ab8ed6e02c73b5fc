import type { OrgCaller } from '../auth/caller';

export interface Actor {
  type: 'api_key' | 'operator' | 'visitor';
  id: string;
}

/** Who did it, as audit entries and event payloads name them. */
export function actorOf(caller: OrgCaller): Actor {
  if (caller.kind === 'operator') return { type: 'operator', id: caller.operatorId };
  if (caller.kind === 'visitor') return { type: 'visitor', id: caller.visitorId };
  return { type: 'api_key', id: caller.credentialId };
}
