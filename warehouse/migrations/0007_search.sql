-- Issue 16: embeddings, the keyword index's builds, and the topic map.

-- One vector per distinct text and model: the embedding cache. text_sha256 is 'sha256:' +
-- the SHA-256 of the whitespace-normalised text (embedding.text_key; for a paper it is
-- papers.text_sha256), so a paper's vector is found by a join and any other text (an
-- entity name) can be cached here too.
CREATE TABLE embeddings (
    text_sha256 VARCHAR NOT NULL,
    model_id VARCHAR NOT NULL,
    vector FLOAT[384] NOT NULL,
    created TIMESTAMP NOT NULL,
    PRIMARY KEY (text_sha256, model_id)
);

-- Each build of DuckDB's full-text index over papers(text): when and over which papers
-- (fingerprint = count and XOR of the ids' hashes), so a search rebuilds it only when
-- the collection changed.
CREATE TABLE fts_builds (
    built TIMESTAMP NOT NULL,
    papers BIGINT NOT NULL,
    fingerprint VARCHAR NOT NULL,
    seconds DOUBLE NOT NULL
);

-- One clustering of the collection into areas, with why it chose its number of areas.
CREATE TABLE topic_runs (
    topic_run_id VARCHAR PRIMARY KEY,
    created TIMESTAMP NOT NULL,
    model_id VARCHAR NOT NULL,
    papers INTEGER NOT NULL,
    areas INTEGER NOT NULL,
    chosen_by VARCHAR NOT NULL,        -- 'silhouette' or 'fixed'
    scores JSON NOT NULL,              -- silhouette per candidate number of areas
    previous_run VARCHAR               -- the run whose area ids were carried over
);

CREATE TABLE topic_areas (
    topic_run_id VARCHAR NOT NULL,
    area_id INTEGER NOT NULL,          -- kept from the previous run when the area matches
    label VARCHAR NOT NULL,
    terms VARCHAR[] NOT NULL,          -- c-TF-IDF terms, best first
    size INTEGER NOT NULL,
    carried_over BOOLEAN NOT NULL,     -- the id came from previous_run
    overlap DOUBLE,                    -- share of the old area's papers still in it
    PRIMARY KEY (topic_run_id, area_id)
);

CREATE TABLE topic_paper_areas (
    topic_run_id VARCHAR NOT NULL,
    paper_id VARCHAR NOT NULL,
    area_id INTEGER NOT NULL,
    similarity DOUBLE NOT NULL,        -- cosine to its area's centroid
    x DOUBLE NOT NULL,                 -- 2-D map position (PCA of the vectors)
    y DOUBLE NOT NULL,
    PRIMARY KEY (topic_run_id, paper_id)
);

CREATE VIEW latest_topic_run AS
SELECT * FROM topic_runs ORDER BY created DESC, topic_run_id DESC LIMIT 1;

CREATE VIEW areas AS
SELECT a.area_id, a.label, a.size, a.terms, a.carried_over, a.topic_run_id
FROM topic_areas a JOIN latest_topic_run r USING (topic_run_id);

CREATE VIEW paper_areas AS
SELECT p.paper_id, p.area_id, a.label, p.similarity, p.x, p.y, p.topic_run_id
FROM topic_paper_areas p JOIN latest_topic_run r USING (topic_run_id)
JOIN topic_areas a USING (topic_run_id, area_id);
