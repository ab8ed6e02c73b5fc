/**
 * Work a function finishes before it handles its first request and that may not run while its
 * module loads: Lambda's Parameters and Secrets extension answers only during invocations
 * (shared/secrets.ts), so a secret a request needs is read at the first one. Modules register a
 * task when they load; the API stack awaits `invokeReady()` before every route (a settled promise
 * once done). A failed task fails that request and is tried again by the next one.
 */
const tasks: (() => Promise<void>)[] = [];
let ready: Promise<void> | undefined;

export function beforeFirstInvoke(task: () => Promise<void>): void {
  tasks.push(task);
  ready = undefined;
}

export function invokeReady(): Promise<void> {
  if (tasks.length === 0) return Promise.resolve();
  ready ??= Promise.all(tasks.map((task) => task())).then(
    () => undefined,
    (error: unknown) => {
      ready = undefined;
      throw error;
    },
  );
  return ready;
}
