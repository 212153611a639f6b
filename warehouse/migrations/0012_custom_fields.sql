-- 0012: the declarations of user fields (`papersift run --fields`), one row per field,
-- the latest run's declaration kept: what the wide paper table, the report, `serve` and
-- its corrections, and search read to know a run's own fields (their grounding, values
-- and cue words), without the user's Python file. Fields stored by runs before this
-- migration are listed from their items, with an unknown grounding.
CREATE TABLE custom_fields (
    name VARCHAR PRIMARY KEY,
    grounding VARCHAR,
    position INTEGER,   -- its place in the fields file
    declaration JSON,   -- schemas.fields.CustomField.as_data()
    declared TIMESTAMP
);

INSERT INTO custom_fields
SELECT DISTINCT field, NULL, NULL, NULL, NULL FROM custom_items;
