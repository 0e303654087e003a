// The seed's Express+pg reference consumer, kept only as the ingest benchmark's baseline.
// Verifies X-MetaKit-Signature (t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>), then one
// INSERT ... ON CONFLICT DO NOTHING per request on a pg Pool of 20, and answers 200 after the insert.
'use strict';
const crypto = require('crypto');
const express = require('express');
const { Pool } = require('pg');

const secret = process.env.METAKIT_WEBHOOK_SECRET;
if (!secret) { console.error('METAKIT_WEBHOOK_SECRET is required'); process.exit(1); }
const port = Number(process.env.HTTP_PORT || 3000);
const tolerance = Number(process.env.METAKIT_WEBHOOK_TOLERANCE_SECONDS || 300);
const pool = new Pool({
  connectionString: process.env.DATABASE_URL, // postgres://user:pass@127.0.0.1:port/db
  max: Number(process.env.PG_POOL_SIZE || 20),
});

function verify(header, raw) {
  if (!header) return null;
  let t = null; const v1s = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i < 0) return null;
    const k = part.slice(0, i).trim(), v = part.slice(i + 1).trim();
    if (k === 't') { if (t !== null || !/^\d+$/.test(v)) return null; t = v; }
    else if (k === 'v1') v1s.push(v);
  }
  if (t === null || v1s.length === 0) return null;
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(t)) > tolerance) return null;
  const expected = crypto.createHmac('sha256', secret).update(t + '.').update(raw).digest();
  for (const v1 of v1s) {
    if (!/^[0-9a-fA-F]{64}$/.test(v1)) continue;
    if (crypto.timingSafeEqual(Buffer.from(v1, 'hex'), expected)) return t + ':' + v1;
  }
  return null;
}

const app = express();
app.post('/hooks/metakit', express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const key = verify(req.get('X-MetaKit-Signature'), raw);
  if (!key) return res.status(400).type('text/plain').send('signature mismatch');
  let event = req.get('X-MetaKit-Event') || null, accountId = null;
  try { const j = JSON.parse(raw.toString('utf8')); event = event || j.event || null; accountId = j.account_id ?? null; } catch (e) { /* stored anyway */ }
  try {
    await pool.query(
      'INSERT INTO webhook_inbox (delivery_key, event, account_id, body) VALUES ($1, $2, $3, $4) ON CONFLICT (delivery_key) DO NOTHING',
      [key, event, accountId, raw.toString('utf8')]);
    res.status(200).type('text/plain').send('stored');
  } catch (e) {
    res.status(503).type('text/plain').send('inbox unavailable, retry later');
  }
});
app.get('/health', (req, res) => res.send('ok'));
app.listen(port, '127.0.0.1', () => console.log(`reference express consumer on 127.0.0.1:${port}`));
