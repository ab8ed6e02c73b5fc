// The first module of a function's isolate (worker thread or child process): TypeScript through tsx
// (its hooks are per thread), then the isolate's runtime. Plain JavaScript: nothing loads .ts yet.
import { register } from 'tsx/esm/api';

register();
await import('./isolate-main.ts');
