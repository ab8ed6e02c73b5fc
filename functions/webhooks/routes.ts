import { listDeliveries, retryDelivery, testWebhook } from './deliveries';
import {
  createWebhook,
  deleteWebhook,
  listWebhookEvents,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
} from './manage-webhooks';

export const webhookRoutes = [
  listWebhooks,
  createWebhook,
  listWebhookEvents,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  testWebhook,
  listDeliveries,
  retryDelivery,
];
