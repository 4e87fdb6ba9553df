-- An approval allows one run of its command: consumed_at records that run,
-- so a turn resumed after a restart can claim an approval decided while
-- the bot was down, and no approval is ever used twice. card_* locate the
-- approval card, so it can be updated when the request expires unseen.
ALTER TABLE approvals ADD COLUMN consumed_at INTEGER;
ALTER TABLE approvals ADD COLUMN card_channel TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN card_message TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN card_shown INTEGER NOT NULL DEFAULT 0; -- the card shows the decision
CREATE INDEX approvals_hash ON approvals(hash, created_at);
