/**
 * The deepest nesting of objects and arrays in a JSON text, measured without parsing (brackets
 * inside strings do not count) and given up on as soon as it passes `limit`. The parsers and
 * serializers that follow JSON.parse recurse; a 256 KiB body can nest 100,000 levels deep.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > limit) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}
