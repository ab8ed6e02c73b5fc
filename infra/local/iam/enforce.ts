import { createRequire } from 'node:module';
import { checksOf, type Input } from './checks';
import { denialMessage, deniedResponse, firstDenial } from './denial';
import type { Identity } from './identity';

/**
 * IAM, enforced locally. Loaded only by the local runtime's isolates (infra/local/isolate-main.ts),
 * never bundled: every AWS SDK client a function creates gets one more middleware, which maps the
 * command to the IAM action(s) and resource ARN(s) AWS authorizes it as (checks.ts) and checks them
 * against the function's role from the synthesized template (infra/iam/policy.ts). A request the
 * role does not grant never reaches the emulator: the middleware answers with the HTTP response AWS
 * sends for it (denial.ts: status, error code, body in the service's protocol) and the client's own
 * deserializer turns it into the same exception a deployed function would get.
 */

interface MiddlewareContext {
  commandName?: string;
  clientName?: string;
}

const ENFORCED = Symbol.for('conversation-service.local-iam');

/**
 * Puts the check on every SDK client of this isolate: all of them are `@smithy/core`'s `Client`
 * (one CommonJS copy in node_modules), and the first `send` of each adds the middleware to its
 * stack (a document client shares its DynamoDB client's stack). Inside the deserialize step: a
 * denied request's answer goes through the client's own error parsing.
 */
export function enforceIam(identity: Identity): void {
  const require = createRequire(import.meta.url);
  const { Client } = require('@smithy/core/client') as {
    Client: { prototype: { send(this: Enforceable, ...args: unknown[]): unknown } };
  };
  const { HttpResponse } = require('@smithy/core/protocols') as {
    HttpResponse: new (options: {
      statusCode: number;
      headers: Record<string, string>;
      body: unknown;
    }) => unknown;
  };
  const send = Client.prototype.send;
  Client.prototype.send = function enforcedSend(this: Enforceable, ...args: unknown[]) {
    if (!this[ENFORCED]) {
      this[ENFORCED] = true;
      const service = String(this.config?.serviceId ?? '')
        .toLowerCase()
        .replace(/\s+/g, '');
      this.middlewareStack.add(
        (next: (args: unknown) => Promise<unknown>, context: MiddlewareContext) =>
          async (handlerArgs: { input: Input }) => {
            const operation = (context.commandName ?? '').replace(/Command$/, '');
            const checks = checksOf(service, operation, handlerArgs.input, identity);
            if (!checks) {
              throw new Error(
                `local IAM check: no mapping for ${service}:${operation} (infra/local/iam/checks.ts): add one`,
              );
            }
            const denial = firstDenial(checks, identity.statements);
            if (!denial) return next(handlerArgs);
            const answer = deniedResponse(service, denialMessage(denial, identity));
            return {
              response: new HttpResponse({
                statusCode: answer.statusCode,
                headers: answer.headers,
                body: Buffer.from(answer.body),
              }),
            };
          },
        { step: 'deserialize', priority: 'low', name: 'localIamEnforcement', override: true },
      );
    }
    return send.apply(this, args);
  };
}

interface Enforceable {
  [ENFORCED]?: boolean;
  config?: { serviceId?: string };
  middlewareStack: {
    add(middleware: unknown, options: Record<string, unknown>): void;
  };
}
