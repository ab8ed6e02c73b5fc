/**
 * Stands in for fontkit in the PDF transcript worker's bundle (functions/workers.ts, `aliases`).
 * The transcript uses PDFKit's standard fonts, whose metrics PDFKit ships itself; fontkit only
 * parses font files a document embeds (TrueType, WOFF, WOFF2 through brotli), some 700 KB of the
 * bundle that never runs. A document that tries to embed one fails here, plainly.
 */
export function create() {
  throw new Error('fontkit is not bundled in this function: it renders with the standard PDF fonts only');
}
