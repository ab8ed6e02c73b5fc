/**
 * `1234567` → `"1,234,567"`, as `toLocaleString('en-US')` writes an integer, without it: the first
 * locale-aware call initialises ICU, which cost an export function's cold import 17 ms when a route
 * description called it at module load (docs/decisions.md, "node:http and ICU at import").
 */
export function thousands(value: number): string {
  return String(Math.trunc(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
