/**
 * The two functions of libphonenumber (full metadata) that `redact.ts` uses, loaded by it on first
 * redaction. Imported dynamically through this module rather than as `libphonenumber-js/max`: a
 * dynamic import keeps every export of the module it names, so naming the package's index put all
 * of it (formatters, `AsYouType`, parsers; ~44 KB minified) in the exports bundle, where V8
 * pre-parses it at every cold start. Through here esbuild keeps only what these two reach.
 */
export { findNumbers, isSupportedCountry } from 'libphonenumber-js/max';
