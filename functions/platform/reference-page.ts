import { createHash } from 'node:crypto';

/**
 * A dependency-free reference page: it fetches the OpenAPI document and lists every operation with
 * its parameters, body and responses. Self-contained so it works offline and under a strict CSP
 * (the inline script is allowed by its hash only).
 */
const script = `
const el = (tag, attrs = {}, ...kids) => { const n = document.createElement(tag); Object.assign(n, attrs); n.append(...kids); return n; };
const json = (value) => el('pre', { textContent: JSON.stringify(value, null, 2) });
fetch('openapi.json').then((r) => r.json()).then((doc) => {
  const main = document.querySelector('main');
  main.append(el('h1', { textContent: doc.info.title + ' ' + doc.info.version }));
  for (const p of doc.info.description.split('\\n\\n')) main.append(el('p', { textContent: p }));
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) (byTag[op.tags[0]] ??= []).push({ path, method, op });
  for (const [tag, ops] of Object.entries(byTag)) {
    main.append(el('h2', { textContent: tag }));
    for (const { path, method, op } of ops) {
      const details = el('details', {}, el('summary', {}, el('code', { className: 'm ' + method, textContent: method.toUpperCase() }), ' ', el('code', { textContent: path }), ' — ' + op.summary));
      for (const p of (op.description || '').split('\\n\\n')) details.append(el('p', { textContent: p }));
      if (op.parameters.length) details.append(el('h4', { textContent: 'Parameters' }), json(op.parameters.map((p) => ({ name: p.name, in: p.in, required: p.required, schema: p.schema }))));
      if (op.requestBody) details.append(el('h4', { textContent: 'Body' }), json(op.requestBody.content['application/json'].schema));
      for (const [status, r] of Object.entries(op.responses)) details.append(el('h4', { textContent: status + ' ' + r.description }), ...(status < 300 ? [json(r.content['application/json'].schema)] : []));
      main.append(details);
    }
  }
});`;

const style = `body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#fafafa;color:#222}main{max-width:960px;margin:0 auto;padding:24px}
details{background:#fff;border:1px solid #ddd;border-radius:6px;margin:6px 0;padding:6px 12px}summary{cursor:pointer}
pre{background:#f4f4f4;padding:8px;overflow:auto;font-size:12px}.m{display:inline-block;min-width:56px;font-weight:700}
.get{color:#0a7}.post{color:#07c}.patch{color:#c80}.put{color:#a5c}.delete{color:#c33}`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export const referencePage = {
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>API reference</title><style>${style}</style></head><body><main></main><script>${script}</script></body></html>`,
  contentSecurityPolicy: `default-src 'none'; connect-src 'self'; script-src ${hash(script)}; style-src ${hash(style)}; frame-ancestors 'none'`,
};
