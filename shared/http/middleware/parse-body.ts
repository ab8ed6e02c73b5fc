import { config } from '../../config';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../errors';
import type { HttpMiddleware } from '../context';
import { nestsDeeperThan } from '../json-depth';

/**
 * Far above any document the API accepts (free-form values stop at 8 levels, so such a body is a
 * 422 naming the field), far below what would exhaust the stack of anything that walks it.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Size first (413 before any parsing work), then media type (415), then nesting and JSON (400).
 * An empty body is "no body"; whether one was required is the validator's call.
 */
export const parseBody = (): HttpMiddleware => ({
  before: (request) => {
    const { event } = request;
    const { state } = request.context;
    if (event.body === null || event.body === undefined || event.body === '') return;
    const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : undefined;
    const size = raw ? raw.length : Buffer.byteLength(event.body, 'utf8');
    if (size > config.maxBodyBytes) throw new PayloadTooLargeError(config.maxBodyBytes);
    const text = raw ? raw.toString('utf8') : event.body;
    if (text.trim() === '') return;
    const contentType = state.headers['content-type'];
    if (contentType !== undefined && !/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType)) {
      throw new UnsupportedMediaTypeError();
    }
    if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
      throw new BadRequestError(`The body nests deeper than ${MAX_BODY_DEPTH} levels`, {
        maxDepth: MAX_BODY_DEPTH,
      });
    }
    try {
      state.body = JSON.parse(text);
    } catch {
      throw new BadRequestError('The body is not valid JSON');
    }
  },
});
