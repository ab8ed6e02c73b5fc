import { completeUpload } from './complete-upload';
import { createUpload } from './create-upload';
import { getUpload } from './get-upload';

export const uploadRoutes = [createUpload, getUpload, completeUpload];
