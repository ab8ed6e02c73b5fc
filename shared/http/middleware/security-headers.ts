import type { HttpMiddleware, HttpRequest } from '../context';
import { corsHeaders } from '../cors';

/** JSON API defaults and CORS; a route that serves HTML (the reference page) sets its own CSP, which wins. */
const defaults: Record<string, string> = {
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains; preload',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  ...corsHeaders,
};

const names = Object.keys(defaults);
const values = Object.values(defaults);

function apply(request: HttpRequest): void {
  const response = request.response;
  if (!response) return;
  response.headers ??= {};
  const headers = response.headers;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (!(name in headers)) headers[name] = values[i] as string;
  }
}

export const securityHeaders = (): HttpMiddleware => ({ after: apply, onError: apply });
