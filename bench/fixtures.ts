import type { Call } from './round-trips';

/** A string at `path` in a JSON response body; anything else stops the bench with the body. */
export function stringAt(body: unknown, ...path: string[]): string {
  let value: unknown = body;
  for (const name of path) value = (value as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string')
    throw new Error(`response has no string at "${path.join('.')}": ${JSON.stringify(body)}`);
  return value;
}

/**
 * An API key of the demo organization that writes a scenario group's fixtures, so preparing a
 * request never warms the measured credential's auth cache entry or rate-limit lease.
 */
export async function fixtureApiKey(
  context: {
    platform: string;
    orgPath: string;
    request: (call: Call, status: number, what: string) => Promise<unknown>;
  },
  purpose: string,
): Promise<string> {
  const created = await context.request(
    {
      method: 'POST',
      path: `${context.orgPath}/api-keys`,
      token: context.platform,
      body: { name: `Bench ${purpose} fixtures` },
    },
    201,
    `create the ${purpose} fixture API key`,
  );
  return stringAt(created, 'key');
}
