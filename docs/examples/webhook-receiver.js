// A subscriber's receiving end, in plain Node.js: verify the signature, de-duplicate on X-Webhook-ID,
// answer 2xx quickly. Run: WEBHOOK_SECRET=whsec_… node webhook-receiver.js (serve it over HTTPS in production,
// e.g. behind your load balancer: only https:// endpoints can be registered).
const { createHmac, timingSafeEqual } = require('node:crypto');
const http = require('node:http');

/** True when the request was signed with `secret` at most 300 seconds ago. `rawBody` is the body exactly as received. */
function verifyWebhook(secret, rawBody, headers) {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  const signature = String(headers['x-webhook-signature'] ?? '');
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
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
        if (!verifyWebhook(process.env.WEBHOOK_SECRET, rawBody, req.headers)) {
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
