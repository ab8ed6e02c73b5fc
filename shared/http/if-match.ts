/**
 * The version an `If-Match` header asks for: `"3"`, `W/"3"` or `3`. `*` asks for nothing. A value
 * that names no version can match none, so it yields -1 (412 with the current version).
 */
export function ifMatchVersion(headers: Readonly<Record<string, string>>): number | undefined {
  const raw = headers['if-match']?.trim();
  if (raw === undefined || raw === '' || raw === '*') return undefined;
  const match = /^(?:W\/)?"?(\d{1,15})"?$/.exec(raw);
  return match?.[1] ? Number(match[1]) : -1;
}

export const etagOf = (version: number): string => `"${version}"`;
