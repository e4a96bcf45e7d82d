-- The word index's segments are merged while the store is idle
-- (`recall::merging`) as soon as two share a level, not four: a search looks
-- each term up in every segment, and an index grown by ordinary writes held
-- a dozen or more. This sets the number the `merge` command waits for.
INSERT INTO recall (recall, rank) VALUES ('usermerge', 2);
