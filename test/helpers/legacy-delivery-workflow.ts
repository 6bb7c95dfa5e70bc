/** The delivery workflow as runs begun before DELIVERY_RUNS_PATCH have it, under its type name: a worker of the previous version. */
export { legacyWebhookDelivery as webhookDelivery } from '../../workflows/webhook-delivery-legacy';
