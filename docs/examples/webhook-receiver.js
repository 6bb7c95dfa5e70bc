// A subscriber's receiving end, in plain Node.js: verify the signature, de-duplicate on X-Webhook-ID,
// answer 2xx quickly. Run: WEBHOOK_SECRET=whsec_… node webhook-receiver.js (serve it over HTTPS in production,
// e.g. behind your load balancer: only https:// endpoints can be registered).
const { createHmac, timingSafeEqual } = require('node:crypto');
const http = require('node:http');

/**
 * True when the request was signed at most 300 seconds ago with `secret`, or with one of `secret` when it is a list
 * (while you switch to a rotated secret). Reads X-Webhook-Signatures (space-separated `v1=<hex>`, one per valid
 * secret of the endpoint: two during a rotation's overlap) and X-Webhook-Signature (the current secret's).
 * `rawBody` is the body exactly as received.
 */
function verifyWebhook(secret, rawBody, headers) {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const signatures = String(headers['x-webhook-signatures'] ?? '')
    .split(' ')
    .filter((value) => value.startsWith('v1='))
    .map((value) => value.slice(3));
  signatures.push(String(headers['x-webhook-signature'] ?? ''));
  return [secret].flat().some((candidate) => {
    const expected = createHmac('sha256', candidate).update(`${timestamp}.${rawBody}`).digest('hex');
    return signatures.some((signature) => signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected)));
  });
}

module.exports = { verifyWebhook };

if (require.main === module) {
  const seen = new Set(); // use your database in real life: deliveries can arrive more than once
  http
    .createServer((req, res) => {
      let rawBody = '';
      req.setEncoding('utf8');
      req.on('data', (chunk) => (rawBody += chunk));
      req.on('end', () => {
        // WEBHOOK_SECRET may list two secrets, space-separated, while you switch to a rotated one.
        if (!verifyWebhook(String(process.env.WEBHOOK_SECRET).split(' '), rawBody, req.headers)) {
          res.writeHead(401).end('{"error":"invalid signature"}');
          return;
        }
        const id = req.headers['x-webhook-id'];
        if (!seen.has(id)) {
          seen.add(id);
          console.log(req.headers['x-webhook-event'], JSON.parse(rawBody));
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
      });
    })
    .listen(Number(process.env.PORT ?? 8080));
}
