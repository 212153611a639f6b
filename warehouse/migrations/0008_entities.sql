-- 0005 (issue 15): canonical entities. Every spelling of a benchmark, method, metric or
-- task is mapped to one entity; every automatic merge is stored with its reason, user
-- decisions are stored apart and win. All tables are insert-only (see "Nothing lost").

CREATE TABLE entity_names (                    -- each distinct spelling seen, once
    kind        VARCHAR NOT NULL,              -- benchmark / method / metric / task
    name        VARCHAR NOT NULL,              -- exactly as stored in the item tables
    name_key    VARCHAR NOT NULL,              -- normalised (case, markup, dashes, spacing)
    source      VARCHAR NOT NULL,              -- items / abstract (an expansion it states)
    first_seen  TIMESTAMP NOT NULL,
    PRIMARY KEY (kind, name)
);

CREATE TABLE entity_decisions (                -- automatic verdicts about two keys
    pass_id   VARCHAR NOT NULL,
    kind      VARCHAR NOT NULL,
    a_key     VARCHAR NOT NULL,
    b_key     VARCHAR NOT NULL,
    verdict   VARCHAR NOT NULL,                -- same / different
    stage     VARCHAR NOT NULL,                -- alias_table / abstract / embedding / llm / guard
    score     DOUBLE,                          -- embedding cosine, LLM confidence; NULL for rules
    detail    VARCHAR,                         -- the reason in words
    created   TIMESTAMP NOT NULL
);

CREATE TABLE entity_user_decisions (           -- what users said; always wins
    seq       BIGINT PRIMARY KEY,              -- order made: the later of two on a pair wins
    kind      VARCHAR NOT NULL,
    a_key     VARCHAR NOT NULL,
    b_key     VARCHAR NOT NULL,
    verdict   VARCHAR NOT NULL,                -- same / different
    note      VARCHAR,
    created   TIMESTAMP NOT NULL
);

CREATE TABLE entity_assignments (              -- a key's entity from a pass on; latest wins
    pass_id       VARCHAR NOT NULL,
    seq           BIGINT NOT NULL,             -- the pass's number: higher is newer
    kind          VARCHAR NOT NULL,
    name_key      VARCHAR NOT NULL,
    entity_id     VARCHAR NOT NULL,
    canonical     VARCHAR NOT NULL,            -- the entity's display name
    direction     VARCHAR,                     -- metrics: higher / lower / either; NULL unknown
    metric_kind   VARCHAR,                     -- metrics: score / improvement / efficiency
    created       TIMESTAMP NOT NULL
);

CREATE TABLE entity_embedded (                -- keys the embedding stage has compared
    kind      VARCHAR NOT NULL,
    name_key  VARCHAR NOT NULL,
    model     VARCHAR NOT NULL,                -- the embedding model's id
    pass_id   VARCHAR NOT NULL
);

CREATE TABLE entity_passes (                   -- each canonicalisation pass that changed anything
    pass_id       VARCHAR PRIMARY KEY,
    seq           BIGINT NOT NULL,
    started       TIMESTAMP NOT NULL,
    seconds       DOUBLE,
    vocabulary    VARCHAR,                     -- fingerprint of the alias tables used
    user_seq      BIGINT,                      -- the last user decision it saw
    new_names     INTEGER,
    decisions     INTEGER,
    changed_keys  INTEGER,
    embedder      VARCHAR,                     -- the embedding model, or why the stage was skipped
    notes         VARCHAR
);

-- The current entity of every key, and of every stored spelling.
CREATE VIEW entity_keys AS
SELECT kind, name_key, entity_id, canonical, direction, metric_kind
FROM entity_assignments
QUALIFY row_number() OVER (PARTITION BY kind, name_key ORDER BY seq DESC) = 1;

CREATE VIEW entity_lookup AS
SELECT n.kind, n.name, n.name_key, k.entity_id, k.canonical, k.direction, k.metric_kind
FROM entity_names n JOIN entity_keys k USING (kind, name_key);

-- One row per entity: its display name, every spelling seen, and how it was merged.
CREATE VIEW entities AS
SELECT
    k.entity_id,
    k.kind,
    any_value(k.canonical) AS canonical,
    list(DISTINCT n.name ORDER BY n.name) FILTER (WHERE n.name IS NOT NULL) AS aliases,
    count(DISTINCT k.name_key) AS keys,
    any_value(k.direction) AS direction,
    any_value(k.metric_kind) AS metric_kind
FROM entity_keys k
LEFT JOIN entity_names n USING (kind, name_key)
GROUP BY k.entity_id, k.kind;

-- The item views gain the entity of each name (NULL, and canonical = name, until
-- `papersift entities build` or a run has canonicalised it).
CREATE OR REPLACE VIEW tasks AS
SELECT t.*, e.entity_id, coalesce(e.canonical, t.name) AS canonical
FROM extraction_tasks t JOIN latest_extractions l USING (extraction_id)
LEFT JOIN entity_lookup e ON e.kind = 'task' AND e.name = t.name;

CREATE OR REPLACE VIEW methods AS
SELECT t.*, e.entity_id, coalesce(e.canonical, t.name) AS canonical
FROM extraction_methods t JOIN latest_extractions l USING (extraction_id)
LEFT JOIN entity_lookup e ON e.kind = 'method' AND e.name = t.name;

CREATE OR REPLACE VIEW benchmarks AS
SELECT t.*, e.entity_id, coalesce(e.canonical, t.name) AS canonical
FROM extraction_benchmarks t JOIN latest_extractions l USING (extraction_id)
LEFT JOIN entity_lookup e ON e.kind = 'benchmark' AND e.name = t.name;

CREATE OR REPLACE VIEW gains AS
SELECT
    t.*,
    m.entity_id AS metric_entity_id,
    coalesce(m.canonical, t.metric) AS canonical_metric,
    m.direction AS metric_direction,
    m.metric_kind,
    d.entity_id AS dataset_entity_id,
    coalesce(d.canonical, t.dataset) AS canonical_dataset
FROM extraction_gains t JOIN latest_extractions l USING (extraction_id)
LEFT JOIN entity_lookup m ON m.kind = 'metric' AND m.name = t.metric
LEFT JOIN entity_lookup d ON d.kind = 'benchmark' AND d.name = t.dataset;

-- One row per claimed result on a canonical benchmark: absolute scores and improvements
-- in separate columns, never one.
CREATE VIEW leaderboard AS
SELECT
    g.dataset_entity_id AS benchmark_id,
    g.canonical_dataset AS benchmark,
    g.metric_entity_id AS metric_id,
    g.canonical_metric AS metric,
    g.metric_direction AS direction,
    g.paper_id,
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = g.paper_id) AS title,
    (SELECT string_agg(DISTINCT m.canonical, '; ' ORDER BY m.canonical) FROM methods m
     WHERE m.extraction_id = g.extraction_id) AS method,
    CASE WHEN g.kind = 'score' THEN g.value END AS score,
    CASE WHEN g.kind IN ('improvement', 'comparison') THEN g.value END AS improvement,
    CASE WHEN g.kind = 'efficiency' THEN g.value END AS efficiency,
    g.unit,
    g.kind AS result_kind,
    g.baseline,
    g.evidence,
    g.mention_start,
    g.mention_end,
    g.char_start,
    g.char_end,
    g.alignment,
    g.value_in_evidence
FROM gains g
WHERE g.dataset IS NOT NULL AND g.value IS NOT NULL;

-- Cross-paper views: methods per canonical task, benchmarks per task, and benchmarks a
-- paper introduces with the other papers of the collection that use them, from the same
-- year on (a paper without a year counts as any year).
CREATE VIEW task_methods AS
SELECT t.entity_id AS task_id, t.canonical AS task, m.entity_id AS method_id,
       m.canonical AS method, count(DISTINCT m.paper_id) AS papers
FROM tasks t JOIN methods m USING (paper_id)
GROUP BY ALL;

CREATE VIEW task_benchmarks AS
SELECT t.entity_id AS task_id, t.canonical AS task, b.entity_id AS benchmark_id,
       b.canonical AS benchmark, count(DISTINCT b.paper_id) AS papers
FROM tasks t JOIN benchmarks b USING (paper_id)
GROUP BY ALL;

CREATE VIEW new_benchmark_uptake AS
WITH paper_year AS (
    SELECT paper_id, min(year) AS year FROM sources GROUP BY paper_id
), introduced AS (
    SELECT b.canonical AS benchmark, b.entity_id AS benchmark_id, b.paper_id, y.year
    FROM benchmarks b LEFT JOIN paper_year y USING (paper_id) WHERE b.introduced
)
SELECT
    i.benchmark_id,
    i.benchmark,
    i.paper_id AS introduced_by,
    count(DISTINCT u.paper_id) AS later_papers,
    list(DISTINCT u.paper_id ORDER BY u.paper_id) FILTER (WHERE u.paper_id IS NOT NULL) AS used_by
FROM introduced i
LEFT JOIN (
    SELECT b.paper_id, b.canonical, y.year FROM benchmarks b LEFT JOIN paper_year y USING (paper_id)
    WHERE NOT coalesce(b.introduced, false)
) u ON u.canonical = i.benchmark AND u.paper_id <> i.paper_id
   AND coalesce(u.year >= i.year, true)
GROUP BY ALL;
