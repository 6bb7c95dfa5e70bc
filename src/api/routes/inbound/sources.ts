/**
 * Accepted X-Webhook-Source values. All use the same signature scheme; the value labels the sending system
 * in logs. Which three third-party systems the spec meant is not shown; see docs/decisions.md.
 */
export const INBOUND_SOURCES = ['custom', 'zapier', 'make', 'n8n'] as const;
