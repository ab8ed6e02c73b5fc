/**
 * Identity-based policy evaluation for the subset CDK emits for this service's roles: `Allow` and
 * `Deny` statements with `Action` and `Resource` (strings or lists, IAM wildcards), no `Principal`.
 * AWS's documented order (IAM User Guide, "Policy evaluation logic", single account, identity
 * policies only): an explicit Deny in any statement wins; otherwise an Allow that matches both the
 * action and the resource grants; otherwise the request is implicitly denied. A statement this
 * evaluator cannot judge (`Condition`, `NotAction`, `NotResource`) never grants, and a Deny of that
 * kind is taken as denying (failing closed), so a local run never allows what AWS might refuse.
 *
 * Shared by the local runtime (infra/local/iam/enforce.ts: every AWS call of a function is checked
 * against its role) and the template tests (test/infra/iam-needs.checks.ts).
 */

export interface Statement {
  effect: 'Allow' | 'Deny';
  actions: readonly string[];
  /** IAM wildcards kept; the values resolved by the caller (placeholders or local ARNs). */
  resources: readonly string[];
  /** Condition, NotAction, NotResource or NotPrincipal: not evaluated here. */
  unsupported: boolean;
  /** Where it comes from (the policy's logical id), for messages. */
  policy: string;
}

const asList = (value: unknown): unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** A policy document's statements, each value turned into a string by `resolve`. */
export function statementsOf(
  document: unknown,
  policy: string,
  resolve: (value: unknown) => string,
): Statement[] {
  return asList((document as { Statement?: unknown } | undefined)?.Statement).map((raw) => {
    const statement = raw as Record<string, unknown>;
    return {
      effect: statement.Effect === 'Deny' ? 'Deny' : 'Allow',
      actions: asList(statement.Action).map(String),
      resources: asList(statement.Resource).map(resolve),
      unsupported: ['Condition', 'NotAction', 'NotResource', 'NotPrincipal'].some((key) => key in statement),
      policy,
    };
  });
}

const patterns = new Map<string, RegExp>();

/**
 * IAM's wildcards: `*` any run of characters (`/` and `:` included), `?` exactly one. Actions
 * compare without regard to case, resources (ARNs) with it.
 */
export function wildcardMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`;
  let regex = patterns.get(key);
  if (!regex) {
    const source = pattern
      .split('')
      .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    regex = new RegExp(`^${source}$`, ignoreCase ? 'is' : 's');
    patterns.set(key, regex);
  }
  return regex.test(value);
}

const matches = (statement: Statement, action: string, resource: string): boolean =>
  statement.actions.some((pattern) => wildcardMatch(pattern, action, true)) &&
  statement.resources.some((pattern) => wildcardMatch(pattern, resource));

export type Decision = 'allowed' | 'explicit-deny' | 'implicit-deny';

/** AWS's answer for one action on one resource. */
export function evaluate(statements: readonly Statement[], action: string, resource: string): Decision {
  if (statements.some((statement) => statement.effect === 'Deny' && matches(statement, action, resource)))
    return 'explicit-deny';
  const granted = statements.some(
    (statement) =>
      statement.effect === 'Allow' && !statement.unsupported && matches(statement, action, resource),
  );
  return granted ? 'allowed' : 'implicit-deny';
}

/** Whether the statements allow the action on the resource. */
export const allows = (statements: readonly Statement[], action: string, resource: string): boolean =>
  evaluate(statements, action, resource) === 'allowed';
