-- 0006 (issue 12): a gain's metric, baseline and dataset are grounded by code, like names.
-- How each was found: exact / normalized / fuzzy (all its words in the gain's sentence) /
-- none. A baseline or dataset with 'none' was proposed by the model but is not in the
-- abstract: it is not stored (NULL) and the extraction's `rejected` says so. A metric with
-- 'none' is kept (every gain has one) and flagged. NULL: the model gave no such attribute
-- (or the extraction predates this migration).
ALTER TABLE extraction_gains ADD COLUMN metric_alignment VARCHAR;
ALTER TABLE extraction_gains ADD COLUMN baseline_alignment VARCHAR;
ALTER TABLE extraction_gains ADD COLUMN dataset_alignment VARCHAR;

-- The view selects t.* and is bound to the columns it saw: rebuild it.
CREATE OR REPLACE VIEW gains AS
SELECT t.* FROM extraction_gains t JOIN latest_extractions l USING (extraction_id);
