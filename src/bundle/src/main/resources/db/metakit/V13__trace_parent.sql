-- A delivery's trace goes on past the inbox: the ingest span's context, as W3C traceparent text, is kept with the
-- delivery, and the reconcile's with each position change it writes, so the reconcile links to the deliveries it
-- serves and the feed sends the change on with its traceparent (docs/operations.md "Tracing"). Null when tracing is
-- off. On the parent tables only: a column added to a partitioned table reaches every partition.
alter table webhook_inbox add column trace_parent text;
alter table position_changes add column trace_parent text;
