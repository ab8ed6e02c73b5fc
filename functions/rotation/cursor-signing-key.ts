import type { Context } from 'aws-lambda';
import { type RotationEvent, rotateCursorSigningKey } from '../../shared/cursor-key-rotation';
import { beginRequest } from '../../shared/logger';

export type { RotationEvent };

/**
 * Secrets Manager's rotation function for the cursor signing key ring, scheduled by the stack.
 * Functions pick the new ring up within CURSOR_KEYS_REFRESH_SECONDS; no cursor breaks.
 */
export const handler = async (event: RotationEvent, context?: Context): Promise<void> => {
  beginRequest(context?.awsRequestId ?? event.ClientRequestToken);
  await rotateCursorSigningKey(event);
};
