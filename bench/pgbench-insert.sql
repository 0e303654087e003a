-- pgbench baseline for the ingest benchmark: the same single-row INSERT ... ON CONFLICT DO NOTHING the consumer's
-- ack path needs, one commit per transaction, a unique key per transaction and a ~400-byte body.
-- Run: pgbench -n -c 64 -j 2 -T 15 -M prepared -f bench/pgbench-insert.sql  (bench/ingest-bench.sh does this)
-- The body avoids ':' followed by a letter or digit, which pgbench would read as a variable: JSON with ": " and
-- \u003a for the colons of the timestamps (the same JSON value).
\set r random(1, 9000000000000000)
\set account random(1, 1000)
INSERT INTO metakit.webhook_inbox (delivery_key, event, account_id, body, signed_at)
VALUES ('pgb-' || :client_id || '-' || :r, 'position.opened', :account,
        '{"event": "position.opened", "account_id": 2, "created_at": "2026-12-02T10\u003a15\u003a30Z", "data": {"ticket": 99302156, "symbol": "EURUSD", "type": "buy", "volume": 0.10, "price_open": 1.08450, "sl": 1.08000, "tp": 1.09500, "profit": 0.00, "swap": 0.00, "commission": -0.70, "time": "2026-12-02T10\u003a15\u003a30Z", "magic": 20261202, "comment": "metakit-inbox bench", "login": 5000002, "server": "MetaQuotes-Demo", "position_id": 99302156}}', now())
ON CONFLICT (delivery_key, signed_at) DO NOTHING;
