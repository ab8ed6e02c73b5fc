import { describe, expect, it } from 'vitest';
import { IMPERSONATION_COOKIE, impersonationCookie } from '../../functions/admin/impersonation';

describe('impersonationCookie', () => {
  it('finds the session among other cookies, whatever the spacing', () => {
    expect(impersonationCookie(`theme=dark;${IMPERSONATION_COOKIE}=svc_os_abc; lang=fr`)).toBe('svc_os_abc');
    expect(impersonationCookie(` ${IMPERSONATION_COOKIE} = svc_os_abc `)).toBe('svc_os_abc');
  });

  it('is undefined without one, or when it was cleared', () => {
    expect(impersonationCookie(undefined)).toBeUndefined();
    expect(impersonationCookie('theme=dark')).toBeUndefined();
    expect(impersonationCookie(`${IMPERSONATION_COOKIE}=`)).toBeUndefined();
    expect(impersonationCookie(`x${IMPERSONATION_COOKIE}=svc_os_abc`)).toBeUndefined();
  });
});
