-- 0001: the first data model. Append-only: later changes go in new numbered files.

CREATE TABLE papers (
    paper_id     VARCHAR PRIMARY KEY,          -- 'sha256:' + hash of the whitespace-normalised text
    text         VARCHAR NOT NULL,             -- the original text, character for character
    text_sha256  VARCHAR NOT NULL,             -- hash of the stored text itself
    chars        INTEGER NOT NULL,
    first_seen   TIMESTAMP NOT NULL
);

CREATE TABLE sources (                         -- one row for each place an abstract occurs
    paper_id    VARCHAR NOT NULL,
    file        VARCHAR NOT NULL,
    position    INTEGER NOT NULL,              -- abstract number within the file (or data row)
    line        INTEGER,
    collection  VARCHAR,
    venue       VARCHAR,
    year        INTEGER,
    source_id   VARCHAR,
    title       VARCHAR,
    first_seen  TIMESTAMP NOT NULL,
    PRIMARY KEY (paper_id, file, position)
);

CREATE TABLE runs (
    run_id             VARCHAR PRIMARY KEY,
    started            TIMESTAMP NOT NULL,
    finished           TIMESTAMP,
    status             VARCHAR NOT NULL,       -- running / finished / interrupted / crashed
    endpoint           VARCHAR,
    model              VARCHAR,
    mode               VARCHAR,
    prompt_version     VARCHAR,
    schema_version     VARCHAR,
    params             JSON,
    inputs             JSON,
    n_abstracts        INTEGER,
    n_extracted        INTEGER,
    n_cached           INTEGER,
    n_failed           INTEGER,
    prompt_tokens      BIGINT,
    completion_tokens  BIGINT,
    papersift_version  VARCHAR
);

CREATE TABLE calls (                           -- every HTTP attempt made to a model endpoint
    run_id             VARCHAR NOT NULL,
    paper_id           VARCHAR NOT NULL,
    ask                INTEGER NOT NULL,       -- 1 = first request, 2.. = validation re-asks
    attempt            INTEGER NOT NULL,       -- transport attempt within that ask
    status             VARCHAR NOT NULL,       -- ok / invalid / http_error / timeout / connection_error / length
    http_status        INTEGER,
    latency_ms         DOUBLE,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    finish_reason      VARCHAR,
    error              VARCHAR,
    cache_key          VARCHAR,
    started            TIMESTAMP NOT NULL
);

CREATE TABLE extractions (
    extraction_id   VARCHAR PRIMARY KEY,       -- 'sha256:' + hash of cache key and response
    paper_id        VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,          -- the run that first produced it
    cache_key       VARCHAR NOT NULL,
    endpoint        VARCHAR,
    model           VARCHAR,
    mode            VARCHAR,
    prompt_version  VARCHAR,
    schema_version  VARCHAR,
    raw_json        JSON NOT NULL,             -- the validated response, as the model gave it
    asks            INTEGER,                   -- requests it took, re-asks included
    lenient         BOOLEAN NOT NULL,          -- true: accepted after re-asks ran out, items flagged
    items           INTEGER NOT NULL,
    items_ungrounded INTEGER NOT NULL,
    created         TIMESTAMP NOT NULL
);

CREATE TABLE run_papers (                      -- what each run did with each abstract
    run_id         VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    outcome        VARCHAR NOT NULL,           -- extracted / cached / failed
    extraction_id  VARCHAR,
    recorded       TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, paper_id)
);

CREATE TABLE extraction_contribution_types (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    idx            INTEGER NOT NULL,
    type           VARCHAR NOT NULL
);

CREATE TABLE extraction_tasks (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    idx            INTEGER NOT NULL,
    name           VARCHAR NOT NULL,
    evidence       VARCHAR NOT NULL,
    char_start     INTEGER,
    char_end       INTEGER,
    alignment      VARCHAR NOT NULL,           -- exact / normalized / fuzzy / none
    align_score    DOUBLE
);

CREATE TABLE extraction_methods (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    idx            INTEGER NOT NULL,
    name           VARCHAR NOT NULL,
    expansion      VARCHAR,
    aliases        VARCHAR[],
    evidence       VARCHAR NOT NULL,
    char_start     INTEGER,
    char_end       INTEGER,
    alignment      VARCHAR NOT NULL,
    align_score    DOUBLE
);

CREATE TABLE extraction_benchmarks (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    idx            INTEGER NOT NULL,
    name           VARCHAR NOT NULL,
    kind           VARCHAR,
    introduced     BOOLEAN,
    evidence       VARCHAR NOT NULL,
    char_start     INTEGER,
    char_end       INTEGER,
    alignment      VARCHAR NOT NULL,
    align_score    DOUBLE
);

CREATE TABLE extraction_gains (
    extraction_id      VARCHAR NOT NULL,
    paper_id           VARCHAR NOT NULL,
    idx                INTEGER NOT NULL,
    metric             VARCHAR NOT NULL,
    value              DOUBLE,
    unit               VARCHAR,
    kind               VARCHAR,
    baseline           VARCHAR,
    dataset            VARCHAR,
    value_in_evidence  BOOLEAN,                -- NULL when there is no value
    evidence           VARCHAR NOT NULL,
    char_start         INTEGER,
    char_end           INTEGER,
    alignment          VARCHAR NOT NULL,
    align_score        DOUBLE
);

CREATE TABLE failures (                        -- every abstract or input that did not become an extraction
    run_id    VARCHAR,
    paper_id  VARCHAR,                         -- NULL when the input never became a paper (bad file)
    file      VARCHAR,
    position  INTEGER,
    stage     VARCHAR NOT NULL,                -- ingest / request / validation / store
    reason    VARCHAR NOT NULL,                -- short code, e.g. not_utf8, too_long, length, retries_exhausted
    detail    VARCHAR,
    created   TIMESTAMP NOT NULL
);

CREATE TABLE llm_cache (                       -- validated responses by request fingerprint
    cache_key          VARCHAR PRIMARY KEY,
    response_json      JSON NOT NULL,
    lenient            BOOLEAN NOT NULL,
    model              VARCHAR,
    asks               INTEGER,
    prompt_tokens      BIGINT,
    completion_tokens  BIGINT,
    created            TIMESTAMP NOT NULL
);

-- The extraction each paper shows: the one most recently produced or reused by a run.
CREATE VIEW latest_extractions AS
SELECT e.*
FROM extractions e
JOIN (
    SELECT paper_id, extraction_id
    FROM run_papers
    WHERE extraction_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY recorded DESC, run_id DESC) = 1
) latest USING (paper_id, extraction_id);

CREATE VIEW contribution_types AS
SELECT t.* FROM extraction_contribution_types t JOIN latest_extractions l USING (extraction_id);
CREATE VIEW tasks AS
SELECT t.* FROM extraction_tasks t JOIN latest_extractions l USING (extraction_id);
CREATE VIEW methods AS
SELECT t.* FROM extraction_methods t JOIN latest_extractions l USING (extraction_id);
CREATE VIEW benchmarks AS
SELECT t.* FROM extraction_benchmarks t JOIN latest_extractions l USING (extraction_id);
CREATE VIEW gains AS
SELECT t.* FROM extraction_gains t JOIN latest_extractions l USING (extraction_id);

-- One row per paper, list fields joined with '; '. Papers without an extraction show NULLs.
CREATE VIEW paper_summary AS
SELECT
    p.paper_id,
    (SELECT string_agg(DISTINCT s.collection, '; ' ORDER BY s.collection) FROM sources s WHERE s.paper_id = p.paper_id) AS collections,
    (SELECT string_agg(s.file || '#' || s.position, '; ' ORDER BY s.file, s.position) FROM sources s WHERE s.paper_id = p.paper_id) AS occurrences,
    (SELECT min(s.venue) FROM sources s WHERE s.paper_id = p.paper_id) AS venue,
    (SELECT min(s.year) FROM sources s WHERE s.paper_id = p.paper_id) AS year,
    p.chars,
    l.extraction_id,
    l.model,
    (SELECT string_agg(c.type, '; ' ORDER BY c.idx) FROM contribution_types c WHERE c.extraction_id = l.extraction_id) AS contribution_types,
    (SELECT string_agg(t.name, '; ' ORDER BY t.idx) FROM tasks t WHERE t.extraction_id = l.extraction_id) AS tasks,
    (SELECT string_agg(m.name, '; ' ORDER BY m.idx) FROM methods m WHERE m.extraction_id = l.extraction_id) AS methods,
    (SELECT string_agg(b.name || CASE WHEN b.introduced THEN ' (new)' ELSE '' END, '; ' ORDER BY b.idx) FROM benchmarks b WHERE b.extraction_id = l.extraction_id) AS benchmarks,
    (SELECT string_agg(
        g.metric
        || coalesce(' ' || CAST(g.value AS VARCHAR), '')
        || coalesce(' ' || g.unit, '')
        || coalesce(' vs ' || g.baseline, '')
        || coalesce(' on ' || g.dataset, ''),
        '; ' ORDER BY g.idx) FROM gains g WHERE g.extraction_id = l.extraction_id) AS claimed_gains,
    l.items,
    l.items_ungrounded,
    l.lenient,
    p.text
FROM papers p
LEFT JOIN latest_extractions l USING (paper_id);
