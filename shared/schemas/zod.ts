import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

/**
 * `zod/mini`, configured once with English messages (integrators read them, "Invalid input" helps
 * nobody). Import it as a namespace, `import * as z from '…/schemas/zod'`: member access on a
 * namespace lets esbuild drop what is unused (full zod or a re-exported namespace object would pull
 * every locale into each bundle; docs/decisions.md, "zod/mini as a namespace").
 */
config(en());

export * from 'zod/mini';
