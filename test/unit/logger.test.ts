import { afterEach, describe, expect, it, vi } from 'vitest';
import { log } from '../../shared/logger';

describe('log', () => {
  afterEach(() => vi.restoreAllMocks());

  it('stamps every line with the current request id and organization, and forgets them per request', () => {
    const lines: Record<string, unknown>[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(JSON.parse(String(chunk)));
      return true;
    });
    log.beginRequest('req-1');
    log.setOrganization('org-1');
    log.error('boom', { route: 'getConversation' });
    log.beginRequest('req-2');
    log.error('again');
    expect(lines[0]).toMatchObject({
      level: 'ERROR',
      requestId: 'req-1',
      orgId: 'org-1',
      route: 'getConversation',
    });
    expect(lines[1]).toMatchObject({ level: 'ERROR', message: 'again', requestId: 'req-2' });
    expect(lines[1]).not.toHaveProperty('orgId');
  });
});
