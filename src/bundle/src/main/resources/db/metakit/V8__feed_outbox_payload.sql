-- The change's published JSON, written with the row (ChangeStore.append): the one column of the feed's outbox that
-- Debezium's outbox event router needs and the table did not have (its event id, key and type are change_id,
-- account_id and kind, which the router is told to read: README "Past one publisher: Debezium"). json, not jsonb:
-- the text is kept as written, so a Kafka record's value is byte for byte what the in-process publisher sends.
-- Rows written before this migration have none; the in-process publisher never reads it.
alter table position_changes add column payload json;
