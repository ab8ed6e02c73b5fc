import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

/**
 * `zod/mini` keeps each function bundle small (full zod adds ~450 KB minified); the English locale
 * gives integrators readable messages instead of "Invalid input".
 */
z.config(en());

export { z };
