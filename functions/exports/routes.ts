import { bulkExportConversations, exportConversations } from './export-conversations';
import { getExportJob } from './jobs';
import { emailTranscript, getTranscript } from './transcripts';

export const exportRoutes = [
  exportConversations,
  bulkExportConversations,
  getTranscript,
  emailTranscript,
  getExportJob,
];
