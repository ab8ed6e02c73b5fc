import type { AnyRoute, HttpMethod } from './route';

/**
 * Route lookup by API Gateway's own resource template (`event.resource`), so a request costs one map
 * lookup, not a pattern match. `pathMethods` answers 405 (known path, other method).
 */
export interface RouteIndex {
  find(method: string, resource: string): AnyRoute | undefined;
  methodsOf(resource: string): readonly HttpMethod[];
}

/** Each path template's methods, in route order (the `Allow` of a 405, a preflight's methods). */
export function methodsByPath(routes: readonly AnyRoute[]): Record<string, HttpMethod[]> {
  const methods: Record<string, HttpMethod[]> = {};
  for (const route of routes) methods[route.path] = [...(methods[route.path] ?? []), route.method];
  return methods;
}

/** Own paths only: a resource named like an Object.prototype member is no route. */
export const methodsOf = (methods: Readonly<Record<string, readonly HttpMethod[]>>, resource: string) =>
  Object.hasOwn(methods, resource) ? (methods[resource] ?? []) : [];

export function indexRoutes(routes: readonly AnyRoute[]): RouteIndex {
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  const methods = methodsByPath(routes);
  return {
    find: (method, resource) => byKey.get(`${method} ${resource}`),
    methodsOf: (resource) => methodsOf(methods, resource),
  };
}

interface CompiledTemplate {
  path: string;
  pattern: RegExp;
  params: string[];
  literalSegments: number;
}

/**
 * Matches concrete paths to templates the way API Gateway does: literal segments win over
 * `{param}` segments (`/conversations/bulk-close` before `/conversations/{id}`). Used only by the
 * local gateway and tests; in AWS, API Gateway does this.
 */
export function compileTemplates(paths: Iterable<string>) {
  const compiled: CompiledTemplate[] = [...new Set(paths)].map((path) => {
    const params: string[] = [];
    const segments = path.split('/').filter(Boolean);
    const source = segments
      .map((segment) => {
        const param = /^\{(\w+)\}$/.exec(segment);
        if (param?.[1]) {
          params.push(param[1]);
          return '/([^/]+)';
        }
        return `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
      })
      .join('');
    return {
      path,
      pattern: new RegExp(`^${source}$`),
      params,
      literalSegments: segments.length - params.length,
    };
  });
  compiled.sort((a, b) => b.literalSegments - a.literalSegments);
  return {
    match(path: string): { template: string; params: Record<string, string> } | undefined {
      for (const template of compiled) {
        const found = template.pattern.exec(path);
        if (!found) continue;
        const params: Record<string, string> = {};
        template.params.forEach((name, i) => {
          params[name] = decodeURIComponent(found[i + 1] ?? '');
        });
        return { template: template.path, params };
      }
      return undefined;
    },
  };
}
