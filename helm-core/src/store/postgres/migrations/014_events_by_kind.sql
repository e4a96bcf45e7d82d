-- A channel's events of a few kinds, newest first (its lifecycle: archived,
-- restored, members, failed turns), without reading every message and tool
-- event the channel ever had.
CREATE INDEX IF NOT EXISTS events_channel_type ON events(channel_id, type, seq);
