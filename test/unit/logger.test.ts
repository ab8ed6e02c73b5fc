import { afterEach, describe, expect, it, vi } from 'vitest';
import { beginRequest, logger } from '../../shared/logger';

describe('logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('stamps every line with the current request id and organization, and forgets them per request', () => {
    const lines: Record<string, unknown>[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(JSON.parse(String(chunk)));
      return true;
    });
    beginRequest('req-1');
    logger.appendKeys({ orgId: 'org-1' });
    logger.error('boom', { route: 'getConversation' });
    beginRequest('req-2');
    logger.error('again');
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
