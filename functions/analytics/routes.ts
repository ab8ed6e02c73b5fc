import { getCsat } from './csat';
import { exportAnalytics } from './export-analytics';
import { createSurvey, deleteSurvey, listSurveys } from './surveys';

export const analyticsRoutes = [listSurveys, createSurvey, deleteSurvey, getCsat, exportAnalytics];
