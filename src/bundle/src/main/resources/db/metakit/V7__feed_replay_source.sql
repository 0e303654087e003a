-- When an operator last replayed the delivery (InboxQueue.replay); null: never. The reconcile that replayed rows ring
-- for writes the changes it finds with source 'replay' (position_changes.source), so downstream can tell changes
-- found again by a replay from those found by live events.
alter table webhook_inbox add column replayed_at timestamptz;
