import { describe, expect, it } from 'vitest';
import { toJSONSchema } from 'zod/v4/core';
import { allRoutes, apiTags, routeCatalog, routeTable } from '../../functions/routes';
import { buildOpenApi } from '../../shared/http/openapi';
import { catalogIndex, type RouteCatalog } from '../../shared/http/route-catalog';
import { indexRoutes } from '../../shared/http/router';

/** The route table is the single fact four consumers read: it must be coherent on its own. */
describe('the route table', () => {
  const routes = allRoutes();

  it('names every operation once and every method + path once', () => {
    const operations = routes.map((route) => route.operationId);
    expect(new Set(operations).size).toBe(operations.length);
    const endpoints = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(endpoints).size).toBe(endpoints.length);
  });

  it('declares exactly the path parameters its template names', () => {
    for (const route of routes) {
      const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
      const declared = route.params
        ? Object.keys((toJSONSchema(route.params) as { properties?: object }).properties ?? {}).sort()
        : [];
      expect(declared, `${route.method} ${route.path}`).toEqual(inPath);
    }
  });

  it('gives every organization route accessible to API keys a scope, and no public route one', () => {
    for (const route of routes) {
      if (route.callers.includes('public')) expect(route.scope, route.operationId).toBeUndefined();
      if (route.callers.includes('apiKey') && route.path !== '/api/me') {
        expect(route.scope, route.operationId).toBeDefined();
      }
    }
  });

  it('puts each group in its own folder and each route in exactly one group', () => {
    const names = routeTable().map((group) => group.name);
    expect(new Set(names).size).toBe(names.length);
    const grouped = routeTable().flatMap((group) => group.routes);
    expect(grouped.length).toBe(new Set(grouped).size);
  });

  it('documents every route in the OpenAPI document with its responses', () => {
    const document = buildOpenApi(routes, 'test', apiTags());
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()] as
        | { operationId: string; responses: Record<string, unknown> }
        | undefined;
      expect(operation?.operationId).toBe(route.operationId);
      expect(Object.keys(operation?.responses ?? {})).toContain(String(route.response.status));
    }
  });
});

describe('the route catalog the platform function answers 404 and 405 from', () => {
  const catalog = routeCatalog('test');
  const table = indexRoutes(allRoutes());
  const fromCatalog = catalogIndex(JSON.parse(JSON.stringify(catalog)) as RouteCatalog);

  it('knows each path with the methods the route table gives it, after a trip through JSON', () => {
    for (const path of new Set(allRoutes().map((route) => route.path))) {
      expect(fromCatalog.methodsOf(path), path).toEqual(table.methodsOf(path));
    }
  });

  it('knows no path named like an object member', () => {
    for (const resource of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(fromCatalog.methodsOf(resource)).toEqual([]);
      expect(table.methodsOf(resource)).toEqual([]);
    }
  });
});
