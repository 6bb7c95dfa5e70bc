import { rateLimitHeaders } from '../../src/api/middleware/rate-limit';

const now = 1_800_000_030;
const window = (name: string, seconds: number, limit: number, remaining: number, resetsAt: number) => ({ name, seconds, limit, remaining, resetsAt });

describe('rate limit headers', () => {
  it('describes every window and the tightest one in X-RateLimit-*', () => {
    const headers = rateLimitHeaders(
      { allowed: true, windows: [window('minute', 60, 60, 59, now + 30), window('hour', 3600, 1000, 10, now + 600), window('day', 86400, 10000, 9000, now + 5000)] },
      now,
    );
    expect(headers['RateLimit-Policy']).toBe('"minute";q=60;w=60, "hour";q=1000;w=3600, "day";q=10000;w=86400');
    expect(headers.RateLimit).toBe('"minute";r=59;t=30, "hour";r=10;t=600, "day";r=9000;t=5000');
    expect(headers['X-RateLimit-Limit']).toBe('1000');
    expect(headers['X-RateLimit-Remaining']).toBe('10');
    expect(headers['X-RateLimit-Reset']).toBe(String(now + 600));
    expect(headers['Retry-After']).toBeUndefined();
  });

  it('sets Retry-After to when the last exhausted window starts over', () => {
    const headers = rateLimitHeaders(
      { allowed: false, windows: [window('minute', 60, 60, 0, now + 30), window('hour', 3600, 1000, 0, now + 600), window('day', 86400, 10000, 5, now + 5000)] },
      now,
    );
    expect(headers['Retry-After']).toBe('600');
  });
});
