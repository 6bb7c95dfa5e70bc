// A subscriber's receiving end in Node.js with the client SDK: verify the signature and the timestamp,
// de-duplicate on X-Webhook-ID, answer 2xx quickly. In this repository, after `npm install`:
//   npm run build:sdk && WEBHOOK_SECRET=whsec_… node docs/examples/webhook-receiver.mjs
// Elsewhere, install the package (README: Client SDK) and copy this file. Serve it over HTTPS in production
// (e.g. behind your load balancer): only https:// endpoints can be registered.
import { verifyWebhook, WebhookVerificationError } from '@construction-integration/client';
import http from 'node:http';

// While you switch to a rotated secret, WEBHOOK_SECRET lists both, space-separated.
const secrets = String(process.env.WEBHOOK_SECRET ?? '').split(' ').filter(Boolean);
if (secrets.length === 0) {
  console.error('Set WEBHOOK_SECRET to the endpoint secret (whsec_…)');
  process.exit(1);
}
const seen = new Set(); // use your database in real life: deliveries can arrive more than once
// As the spec's receiver examples answer: a bad signature is a 401, an old timestamp (or a body that is not JSON) a 400.
const UNSIGNED = new Set(['MISSING_SIGNATURE', 'INVALID_SIGNATURE']);

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let event;
    try {
      // The bytes exactly as received: the signature covers them, not a re-serialised copy.
      event = verifyWebhook(Buffer.concat(chunks), req.headers, secrets);
    } catch (error) {
      const status = error instanceof WebhookVerificationError ? (UNSIGNED.has(error.code) ? 401 : 400) : 500;
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: error.message }));
      return;
    }
    const id = req.headers['x-webhook-id'];
    if (!seen.has(id)) {
      seen.add(id);
      // Shape A names the event in event_type, shape B in event.
      console.log(event.event_type ?? event.event, JSON.stringify(event.data));
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
  });
});
server.listen(Number(process.env.PORT ?? 8080), () => console.log(`listening on port ${server.address().port}`));
