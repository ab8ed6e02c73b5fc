import { createStreamingHandler } from '../../shared/http/stack';
import { exportRoutes } from './routes';

/** A streaming function (Lambda response streaming): exports and transcripts are written as read. */
export const handler = createStreamingHandler(exportRoutes);
