import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { log } from '../../shared/logger';

describe('log', () => {
  afterEach(() => vi.restoreAllMocks());

  it('stamps every line with the current request id and organization, and forgets them per request', () => {
    const error = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    log.beginRequest('req-1');
    log.setOrganization('org-1');
    log.error('boom', { route: 'getConversation' });
    log.beginRequest('req-2');
    log.error('again');
    expect(error.mock.calls[0]?.[1]).toEqual({
      requestId: 'req-1',
      orgId: 'org-1',
      route: 'getConversation',
    });
    expect(error.mock.calls[1]?.[1]).toEqual({ requestId: 'req-2', orgId: undefined });
  });
});
