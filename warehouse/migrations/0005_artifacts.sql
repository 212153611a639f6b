-- 0005: artifacts a paper releases (code, data, models, benchmarks), found by code in the
-- abstract; and the items of user-defined fields (`papersift run --fields`), one generic
-- long table with one view per field (created when a run declares the field).

CREATE TABLE extraction_artifacts (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    idx            INTEGER NOT NULL,
    kind           VARCHAR NOT NULL,           -- code / data / model / benchmark
    url            VARCHAR,                    -- the address the abstract gives, if any
    evidence       VARCHAR NOT NULL,           -- the sentence that says it is released
    char_start     INTEGER,
    char_end       INTEGER,
    alignment      VARCHAR NOT NULL,
    align_score    DOUBLE,
    mention_start  INTEGER,                    -- the release cue or the URL itself
    mention_end    INTEGER
);

CREATE VIEW artifacts AS
SELECT t.* FROM extraction_artifacts t JOIN latest_extractions l USING (extraction_id);

CREATE TABLE custom_items (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    field          VARCHAR NOT NULL,           -- the user's field name
    idx            INTEGER NOT NULL,
    value          VARCHAR NOT NULL,           -- as the abstract writes it ('true'/'false' for a flag)
    unit           VARCHAR,                    -- numbers only
    evidence       VARCHAR NOT NULL,
    char_start     INTEGER,
    char_end       INTEGER,
    alignment      VARCHAR NOT NULL,
    align_score    DOUBLE,
    mention_start  INTEGER,
    mention_end    INTEGER
);

CREATE VIEW custom AS
SELECT t.* FROM custom_items t JOIN latest_extractions l USING (extraction_id);
