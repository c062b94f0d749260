"""The schema, as forward migrations. Version N of the file = migrations 1..N applied.

Each migration is plain DDL run inside one transaction together with the `user_version` bump, so a
failed migration leaves the file at its previous version (a backup is taken before any of them).
DDL is written out rather than generated so CHECK constraints and foreign keys stay reviewable.
"""

from __future__ import annotations

from dataclasses import dataclass

# 'RAGE' in ASCII: tells our files apart from any other SQLite database.
APPLICATION_ID = 0x52414745

SCHEMA_V1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE slices (
    name     TEXT PRIMARY KEY,
    target   INTEGER,               -- wanted number of golden rows (balance panel)
    position INTEGER NOT NULL DEFAULT 0
);

-- Golden set: the contract for "is the new version better". Rows are never deleted, only retired.
CREATE TABLE golden_rows (
    id             TEXT PRIMARY KEY,
    question       TEXT NOT NULL CHECK (length(trim(question)) > 0),
    question_norm  TEXT NOT NULL,   -- normalised question, to link run rows that carry no id
    gold_answer    TEXT,
    gold_chunk_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(gold_chunk_ids)),
    slice_tag      TEXT,
    source         TEXT NOT NULL DEFAULT 'import'
                   CHECK (source IN ('import', 'manual', 'synthetic', 'production_failure')),
    status         TEXT NOT NULL DEFAULT 'approved' CHECK (status IN ('draft', 'approved', 'retired')),
    revision       INTEGER NOT NULL DEFAULT 1,
    metadata       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX golden_rows_question_norm ON golden_rows (question_norm);
CREATE INDEX golden_rows_slice ON golden_rows (slice_tag);

-- Edit history: who, when, why, before and after, for every change of a golden row.
CREATE TABLE golden_edits (
    id        INTEGER PRIMARY KEY,
    golden_id TEXT NOT NULL REFERENCES golden_rows (id) ON DELETE CASCADE,
    revision  INTEGER NOT NULL,
    op        TEXT NOT NULL CHECK (op IN ('create', 'update', 'retire', 'restore', 'approve')),
    author    TEXT NOT NULL,
    at        TEXT NOT NULL,
    reason    TEXT,
    before    TEXT CHECK (before IS NULL OR json_valid(before)),
    after     TEXT CHECK (after IS NULL OR json_valid(after))
);
CREATE INDEX golden_edits_row ON golden_edits (golden_id, revision);

CREATE TABLE golden_versions (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    author     TEXT NOT NULL,
    note       TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE golden_version_rows (
    version_id INTEGER NOT NULL REFERENCES golden_versions (id) ON DELETE CASCADE,
    golden_id  TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    data       TEXT NOT NULL CHECK (json_valid(data)),
    PRIMARY KEY (version_id, golden_id)
) WITHOUT ROWID;

-- What gold_chunk_ids point at.
CREATE TABLE corpus_chunks (
    chunk_id    TEXT PRIMARY KEY,
    doc_id      TEXT NOT NULL,
    position    INTEGER NOT NULL DEFAULT 0,
    text        TEXT NOT NULL,
    token_count INTEGER,
    metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
);
CREATE INDEX corpus_chunks_doc ON corpus_chunks (doc_id, position);

-- One version of the user's RAG system.
CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
    source_file        TEXT,
    format             TEXT,
    config             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
    notes              TEXT,
    golden_fingerprint TEXT,         -- golden set state when imported ("golden set changed since")
    created_at         TEXT NOT NULL
);

CREATE TABLE run_rows (
    id                INTEGER PRIMARY KEY,
    run_id            INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position          INTEGER NOT NULL,
    external_id       TEXT NOT NULL,
    golden_id         TEXT REFERENCES golden_rows (id) ON DELETE SET NULL,
    question          TEXT NOT NULL,
    answer            TEXT,
    latency_ms        REAL,
    cost_usd          REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    metadata          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    UNIQUE (run_id, external_id)
);
CREATE INDEX run_rows_run_position ON run_rows (run_id, position);
CREATE INDEX run_rows_golden ON run_rows (golden_id);

-- Retrieved passages of a run row, in rank order (rank 1 = best).
CREATE TABLE retrieved_passages (
    run_row_id INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    rank       INTEGER NOT NULL CHECK (rank >= 1),
    chunk_id   TEXT,
    text       TEXT,
    score      REAL,
    in_prompt  INTEGER CHECK (in_prompt IN (0, 1)),   -- reached the generator's prompt (reranker cut)
    PRIMARY KEY (run_row_id, rank)
) WITHOUT ROWID;

-- Rubric prompt templates; editing one stores a new version, judgments point at the exact version.
CREATE TABLE rubrics (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    version       INTEGER NOT NULL,
    metric        TEXT NOT NULL,
    output_format TEXT NOT NULL,
    scale_min     REAL NOT NULL,
    scale_max     REAL NOT NULL,
    template      TEXT NOT NULL,
    origin        TEXT,
    created_at    TEXT NOT NULL,
    UNIQUE (name, version)
);

-- A judge = a metric + a method. API keys are referenced by name only (api_key_ref), never stored.
CREATE TABLE judges (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    metric        TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('llm', 'embedding', 'lexical')),
    rubric_id     INTEGER REFERENCES rubrics (id),
    model         TEXT,
    base_url      TEXT,
    api_key_ref   TEXT,
    params        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
    status_at     TEXT,
    status_reason TEXT,
    parent_id     INTEGER REFERENCES judges (id),
    created_at    TEXT NOT NULL
);

CREATE TABLE jobs (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL,
    params         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    status         TEXT NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'cancelled', 'failed', 'done', 'interrupted')),
    progress_done  INTEGER NOT NULL DEFAULT 0,
    progress_total INTEGER,
    message        TEXT,
    pid            INTEGER,
    heartbeat_at   TEXT,
    created_at     TEXT NOT NULL,
    started_at     TEXT,
    finished_at    TEXT
);

-- A judge's verdict on a run row (passage_rank = 0) or on one retrieved passage (rank >= 1).
-- idem_key = judge + rubric version + model + target: a resumed job skips what it already has.
CREATE TABLE judgments (
    id                INTEGER PRIMARY KEY,
    judge_id          INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    run_row_id        INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    passage_rank      INTEGER NOT NULL DEFAULT 0,
    idem_key          TEXT NOT NULL UNIQUE,
    status            TEXT NOT NULL CHECK (status IN ('ok', 'unparsed', 'error')),
    error_kind        TEXT,
    score             REAL,
    label             TEXT,
    rationale         TEXT,
    raw_output        TEXT,
    attempts          INTEGER NOT NULL DEFAULT 1,
    repair_retries    INTEGER NOT NULL DEFAULT 0,
    latency_ms        REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          REAL,
    request_id        TEXT,
    job_id            INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
    created_at        TEXT NOT NULL,
    CHECK (status != 'ok' OR score IS NOT NULL)
);
CREATE INDEX judgments_row ON judgments (run_row_id, judge_id);
CREATE INDEX judgments_judge ON judgments (judge_id, status);

CREATE TABLE review_samples (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric     TEXT NOT NULL,
    seed       INTEGER NOT NULL,
    params     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    created_at TEXT NOT NULL
);
CREATE TABLE review_sample_rows (
    sample_id  INTEGER NOT NULL REFERENCES review_samples (id) ON DELETE CASCADE,
    run_row_id INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    stratum    TEXT,
    PRIMARY KEY (sample_id, run_row_id)
) WITHOUT ROWID;

-- Human ratings live beside judgments and never overwrite them. Undo marks a rating withdrawn.
CREATE TABLE human_ratings (
    id            INTEGER PRIMARY KEY,
    run_row_id    INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    metric        TEXT NOT NULL,
    passage_rank  INTEGER NOT NULL DEFAULT 0,
    reviewer      TEXT NOT NULL,
    score         REAL,
    skipped       INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1)),
    comment       TEXT,
    seconds_taken REAL,
    sample_id     INTEGER REFERENCES review_samples (id) ON DELETE SET NULL,
    created_at    TEXT NOT NULL,
    withdrawn_at  TEXT,
    CHECK (skipped = 1 OR score IS NOT NULL)
);
CREATE INDEX human_ratings_row ON human_ratings (run_row_id, metric, reviewer);

CREATE TABLE agreement_reports (
    id         INTEGER PRIMARY KEY,
    judge_id   INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    metric     TEXT NOT NULL,
    sample_id  INTEGER REFERENCES review_samples (id) ON DELETE SET NULL,
    n          INTEGER NOT NULL,
    statistic  TEXT NOT NULL,
    value      REAL,
    ci_low     REAL,
    ci_high    REAL,
    verdict    TEXT NOT NULL CHECK (verdict IN ('pass', 'retire', 'not_enough_ratings')),
    details    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
    created_at TEXT NOT NULL
);

CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY,
    at        TEXT NOT NULL,
    actor     TEXT NOT NULL,
    action    TEXT NOT NULL,
    entity    TEXT,
    entity_id TEXT,
    details   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details))
);
CREATE INDEX audit_log_at ON audit_log (at);
"""

# v2: the embedding cache (text hash + model id) that the MiniLM judge, dedupe and the retrieval lab share.
SCHEMA_V2 = """
CREATE TABLE embeddings (
    text_hash TEXT NOT NULL,
    model_id  TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (text_hash, model_id)
) WITHOUT ROWID;
"""


# v3: the judging engine's exact-match request cache, per-model prices, and cache hits on judgments.
SCHEMA_V3 = """
CREATE TABLE llm_cache (
    key               TEXT PRIMARY KEY,    -- sha256 of endpoint, model, messages and sampling parameters
    model             TEXT NOT NULL,
    content           TEXT NOT NULL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    request_id        TEXT,
    created_at        TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE prices (
    model            TEXT PRIMARY KEY,
    input_per_mtok   REAL NOT NULL CHECK (input_per_mtok >= 0),   -- USD per million prompt tokens
    output_per_mtok  REAL NOT NULL CHECK (output_per_mtok >= 0),
    updated_at       TEXT NOT NULL
);

ALTER TABLE judgments ADD COLUMN cache_hit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rubrics ADD COLUMN system TEXT NOT NULL DEFAULT '';
"""

SCHEMA_V4 = """
-- Which machine runs a job: a pid says whether the owner lives only on the same host.
ALTER TABLE jobs ADD COLUMN host TEXT;

-- A running job holds (judge, run) so that a second job on the same pair never pays for the same calls.
CREATE TABLE job_leases (
    judge_id INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    job_id   INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    PRIMARY KEY (judge_id, run_id)
) WITHOUT ROWID;
"""

# v5: gold-free metrics (issue 13). Nugget lists per question: generated per run (scope 'run:<id>') or curated for
# every run (scope 'golden', edited or approved by a person). A judgment's structured result (nuggets with their
# importance and assignment, citation pairs with their support) is kept in `detail`.
SCHEMA_V5 = """
CREATE TABLE nugget_lists (
    id           INTEGER PRIMARY KEY,
    question_key TEXT NOT NULL,          -- the golden row's id, or 'q:' + the normalised question when unlinked
    scope        TEXT NOT NULL,          -- 'golden' (used by every run) or 'run:<run id>' (generated for that run;
                                         -- from v6 'run:<run id>/judge:<judge id>', one list per judge)
    status       TEXT NOT NULL CHECK (status IN ('generated', 'edited', 'approved')),
    question     TEXT NOT NULL,
    nuggets      TEXT NOT NULL CHECK (json_valid(nuggets)),   -- [{"text": ..., "importance": "vital" | "okay"}]
    revision     INTEGER NOT NULL DEFAULT 1,
    judge_id     INTEGER REFERENCES judges (id) ON DELETE SET NULL,
    source       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(source)),  -- passages used, raw replies, calls
    author       TEXT,
    updated_at   TEXT NOT NULL,
    UNIQUE (question_key, scope)
);

ALTER TABLE judgments ADD COLUMN detail TEXT CHECK (detail IS NULL OR json_valid(detail));

-- a new judge kind, 'hhem' (a local hallucination model): the CHECK is rebuilt the way SQLite documents it
-- (foreign keys off for this migration, so other tables' rows that point at judges stay as they are)
CREATE TABLE judges_v5 (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    metric        TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('llm', 'embedding', 'lexical', 'hhem')),
    rubric_id     INTEGER REFERENCES rubrics (id),
    model         TEXT,
    base_url      TEXT,
    api_key_ref   TEXT,
    params        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
    status_at     TEXT,
    status_reason TEXT,
    parent_id     INTEGER REFERENCES judges (id),
    created_at    TEXT NOT NULL
);
INSERT INTO judges_v5 SELECT id, name, metric, kind, rubric_id, model, base_url, api_key_ref, params, status,
    status_at, status_reason, parent_id, created_at FROM judges;
DROP TABLE judges;
ALTER TABLE judges_v5 RENAME TO judges;
"""

# v6: reviewers rate what a judge judged (issue 13): a passage (UMBRELA grade), a nugget's support, a citation's
# support. A sample holds (row, item) targets: item 0 is the row, item >= 1 a passage rank or an item's number;
# `item_key` names a nugget or a citation by its text, so a rating keeps meaning what was rated when a nugget
# list is edited and re-judged later (agreement compares a rating with the judgment of the same text).
SCHEMA_V6 = """
CREATE TABLE review_sample_rows_v6 (
    sample_id  INTEGER NOT NULL REFERENCES review_samples (id) ON DELETE CASCADE,
    run_row_id INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    item       INTEGER NOT NULL DEFAULT 0,
    item_key   TEXT,
    position   INTEGER NOT NULL,
    stratum    TEXT,
    PRIMARY KEY (sample_id, run_row_id, item)
) WITHOUT ROWID;
INSERT INTO review_sample_rows_v6 (sample_id, run_row_id, item, position, stratum)
    SELECT sample_id, run_row_id, 0, position, stratum FROM review_sample_rows;
DROP TABLE review_sample_rows;
ALTER TABLE review_sample_rows_v6 RENAME TO review_sample_rows;

ALTER TABLE human_ratings ADD COLUMN item_key TEXT;

-- review packs (issue 14): a sample's targets exported to one reviewer as a file of its own, rated elsewhere
-- and imported back. `origin` names a rating's source ('pack:<pack id>:<rating id in the pack>'): importing the
-- same pack twice adds nothing.
CREATE TABLE review_packs (
    id          TEXT PRIMARY KEY,           -- a random id, also inside the pack
    sample_id   INTEGER REFERENCES review_samples (id) ON DELETE SET NULL,
    reviewer    TEXT NOT NULL,
    targets     INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,              -- sha256 of the pack's targets: a pack whose targets changed is refused
    file_name   TEXT,
    created_at  TEXT NOT NULL,
    imported_at TEXT
);
ALTER TABLE human_ratings ADD COLUMN origin TEXT;
CREATE UNIQUE INDEX human_ratings_origin ON human_ratings (origin) WHERE origin IS NOT NULL;

-- where reviewers disagree, a lead sets the consensus score with a reason; agreement then uses it instead of
-- the reviewers' median. Undo withdraws.
CREATE TABLE adjudications (
    id           INTEGER PRIMARY KEY,
    run_row_id   INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    metric       TEXT NOT NULL,
    item         INTEGER NOT NULL DEFAULT 0,
    item_key     TEXT,
    score        REAL NOT NULL,
    reason       TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    lead         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    withdrawn_at TEXT
);
CREATE INDEX adjudications_row ON adjudications (run_row_id, metric);

-- a generated nugget list belongs to its run and the judge that made it ('run:<id>/judge:<id>'): two nugget
-- judges of one run no longer take turns overwriting one list
UPDATE nugget_lists SET scope = scope || '/judge:' || judge_id
    WHERE scope LIKE 'run:%' AND scope NOT LIKE '%/judge:%' AND judge_id IS NOT NULL;
"""

# v7: a sample drawn with unequal probabilities (the `disagreement` and `uncertain` modes) keeps each target's
# inclusion probability, so agreement and PPI can weight its ratings by 1/probability; NULL: a representative draw.
SCHEMA_V7 = """
ALTER TABLE review_sample_rows ADD COLUMN inclusion REAL;
"""

# v8: the golden set's question vectors, one row per (golden row, model), kept in rowid order so that the
# near-duplicate check of new rows reads the whole set's vectors in one sequential scan (the `embeddings` cache is
# keyed by text hash: a lookup per row, its vector on an overflow page). `text_hash` is the hash of the question the
# vector was computed from: a row whose question changed is stale, and is re-embedded (from the cache) and replaced.
SCHEMA_V8 = """
CREATE TABLE golden_vectors (
    golden_id TEXT NOT NULL,
    model_id  TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (golden_id, model_id)
);
"""

# v9: judge jobs through a provider's Batch API. A batch is recorded the moment it exists at the provider (its input
# file first, then its id), so a killed process or a closed app loses nothing: resuming the job polls the batches
# it knows. Results land in the request cache (custom_id = the cache key) marked with the job that sent them, which
# then judges every row through the same parser and writer as a live job and prices those replies at batch rates.
SCHEMA_V9 = """
CREATE TABLE batches (
    id             INTEGER PRIMARY KEY,
    job_id         INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    round          INTEGER NOT NULL DEFAULT 1,      -- 2, ...: a follow-up batch of the requests that failed
    part           INTEGER NOT NULL,                -- its place among the job's files (metadata at the provider)
    base_url       TEXT,
    api_key_ref    TEXT,
    input_file_id  TEXT NOT NULL,
    remote_id      TEXT,                            -- the provider's batch id (NULL until created)
    requests       INTEGER NOT NULL,
    bytes          INTEGER NOT NULL,
    status         TEXT NOT NULL,                   -- the provider's status, then 'merged' once its results are in
    completed      INTEGER NOT NULL DEFAULT 0,
    failed         INTEGER NOT NULL DEFAULT 0,
    output_file_id TEXT,
    error_file_id  TEXT,
    merged         INTEGER NOT NULL DEFAULT 0,      -- replies stored in the cache
    errors         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(errors)),   -- failed requests by kind
    message        TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX batches_job ON batches (job_id);
ALTER TABLE llm_cache ADD COLUMN batch_job INTEGER;   -- a batch reply no judgment has used (and paid for) yet
-- batch prices per million tokens; NULL: half the live price (the providers' usual batch discount)
ALTER TABLE prices ADD COLUMN batch_input_per_mtok REAL CHECK (batch_input_per_mtok >= 0);
ALTER TABLE prices ADD COLUMN batch_output_per_mtok REAL CHECK (batch_output_per_mtok >= 0);
"""

# v10: the passages' ids and prompt flags in an index of their own, so metrics read them without the passages' text
# (a million rows' passages are gigabytes; their ids a hundred megabytes).
SCHEMA_V10 = """
CREATE INDEX retrieved_passages_ids ON retrieved_passages (run_row_id, chunk_id, in_prompt);
"""

# v11: a judgment is unique by its target and key — (run row, judge, passage rank, idempotency key) — instead of by
# the key alone. The key is a random-looking hash: a UNIQUE index over it alone is written at random places, so a
# million-row job rewrote a random index page for nearly every judgment it saved (judging slowed as the project grew).
# Led by the run row, the index grows at its end as a job works through a run, and it also serves what the index on
# (run_row_id, judge_id) served, which goes. The table is rebuilt (a column's UNIQUE cannot be dropped in place).
SCHEMA_V11 = """
CREATE TABLE judgments_v11 (
    id                INTEGER PRIMARY KEY,
    judge_id          INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    run_row_id        INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    passage_rank      INTEGER NOT NULL DEFAULT 0,
    idem_key          TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('ok', 'unparsed', 'error')),
    error_kind        TEXT,
    score             REAL,
    label             TEXT,
    rationale         TEXT,
    raw_output        TEXT,
    attempts          INTEGER NOT NULL DEFAULT 1,
    repair_retries    INTEGER NOT NULL DEFAULT 0,
    latency_ms        REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          REAL,
    request_id        TEXT,
    job_id            INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
    created_at        TEXT NOT NULL,
    cache_hit         INTEGER NOT NULL DEFAULT 0,
    detail            TEXT CHECK (detail IS NULL OR json_valid(detail)),
    CHECK (status != 'ok' OR score IS NOT NULL)
);
INSERT INTO judgments_v11 (id, judge_id, run_row_id, passage_rank, idem_key, status, error_kind, score, label,
    rationale, raw_output, attempts, repair_retries, latency_ms, prompt_tokens, completion_tokens, cost_usd,
    request_id, job_id, created_at, cache_hit, detail)
    SELECT id, judge_id, run_row_id, passage_rank, idem_key, status, error_kind, score, label, rationale, raw_output,
        attempts, repair_retries, latency_ms, prompt_tokens, completion_tokens, cost_usd, request_id, job_id,
        created_at, cache_hit, detail FROM judgments ORDER BY id;
DROP TABLE judgments;
ALTER TABLE judgments_v11 RENAME TO judgments;
CREATE UNIQUE INDEX judgments_target ON judgments (run_row_id, judge_id, passage_rank, idem_key);
CREATE INDEX judgments_judge ON judgments (judge_id, status);
"""

# v12: judge kinds plug in (issue 29): a kind is whatever the registry of kinds holds (built-in or a plug-in), so
# the table no longer lists the kinds. Rebuilt the way SQLite documents it (foreign keys off for the migration).
SCHEMA_V12 = """
CREATE TABLE judges_v12 (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    metric        TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 64),
    rubric_id     INTEGER REFERENCES rubrics (id),
    model         TEXT,
    base_url      TEXT,
    api_key_ref   TEXT,
    params        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
    status_at     TEXT,
    status_reason TEXT,
    parent_id     INTEGER REFERENCES judges (id),
    created_at    TEXT NOT NULL
);
INSERT INTO judges_v12 SELECT id, name, metric, kind, rubric_id, model, base_url, api_key_ref, params, status,
    status_at, status_reason, parent_id, created_at FROM judges ORDER BY id;
DROP TABLE judges;
ALTER TABLE judges_v12 RENAME TO judges;
"""

# v13: undoable operations (issue 29), one list for the app's undo and `rageval undo`: what each did, what undoes
# it, who and from where; an undo is an operation too and marks what it undid.
SCHEMA_V13 = """
CREATE TABLE operations (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    label      TEXT NOT NULL,
    args       TEXT NOT NULL CHECK (json_valid(args)),
    inverse    TEXT NOT NULL CHECK (json_valid(inverse)),
    initiator  TEXT NOT NULL,
    actor      TEXT,
    at         TEXT NOT NULL,
    undone_at  TEXT,
    undone_by  INTEGER REFERENCES operations (id)
);
CREATE INDEX operations_open ON operations (undone_at, id);
"""

# v14: decisions on record (issue 30): a gate's verdict with what it rested on, chained by hash.
SCHEMA_V14 = """
CREATE TABLE decisions (
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL,
    record     TEXT NOT NULL CHECK (json_valid(record)),
    hash       TEXT NOT NULL UNIQUE,
    previous   TEXT,
    created_at TEXT NOT NULL
);
"""

# v15: judge checks (issue 30). Stability and probe runs hold copies of a run's rows (asked again, or perturbed) and
# are kept out of every list of runs, dashboard and sample (`purpose`); a check's summary is bound to the judge's
# fingerprint, so a changed judge's old probe neither bars nor grants its licence.
SCHEMA_V15 = """
ALTER TABLE runs ADD COLUMN purpose TEXT NOT NULL DEFAULT 'run' CHECK (purpose IN ('run', 'probe', 'stability'));
CREATE TABLE judge_checks (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('probe', 'stability')),
    judge_id    INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    source_run  TEXT NOT NULL,
    check_run   TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK (json_valid(fingerprint)),
    summary     TEXT NOT NULL CHECK (json_valid(summary)),
    created_at  TEXT NOT NULL
);
CREATE INDEX judge_checks_judge ON judge_checks (judge_id, kind, id);
"""

# Counts kept as the rows change, so `rageval info` (and the app's navigation) answer at once however large the file:
# golden rows per slice and status, and each run's rows and rows linked to the golden set. Triggers keep them; a
# later migration that rebuilds golden_rows or run_rows must create these triggers again.
SCHEMA_V16 = """
CREATE TABLE golden_counts (
    slice  TEXT NOT NULL,              -- '' for a row without a slice
    status TEXT NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (slice, status)
);
INSERT INTO golden_counts (slice, status, n)
    SELECT COALESCE(slice_tag, ''), status, COUNT(*) FROM golden_rows GROUP BY 1, 2;
CREATE TRIGGER golden_counts_insert AFTER INSERT ON golden_rows BEGIN
    INSERT INTO golden_counts (slice, status, n) VALUES (COALESCE(NEW.slice_tag, ''), NEW.status, 1)
        ON CONFLICT (slice, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER golden_counts_delete AFTER DELETE ON golden_rows BEGIN
    UPDATE golden_counts SET n = n - 1 WHERE slice = COALESCE(OLD.slice_tag, '') AND status = OLD.status;
END;
CREATE TRIGGER golden_counts_update AFTER UPDATE OF slice_tag, status ON golden_rows BEGIN
    UPDATE golden_counts SET n = n - 1 WHERE slice = COALESCE(OLD.slice_tag, '') AND status = OLD.status;
    INSERT INTO golden_counts (slice, status, n) VALUES (COALESCE(NEW.slice_tag, ''), NEW.status, 1)
        ON CONFLICT (slice, status) DO UPDATE SET n = n + 1;
END;
CREATE TABLE run_counts (
    run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    rows   INTEGER NOT NULL,
    linked INTEGER NOT NULL
);
INSERT INTO run_counts (run_id, rows, linked)
    SELECT r.id, COUNT(rr.id), COUNT(rr.golden_id) FROM runs r LEFT JOIN run_rows rr ON rr.run_id = r.id GROUP BY r.id;
CREATE TRIGGER run_counts_new_run AFTER INSERT ON runs BEGIN
    INSERT INTO run_counts (run_id, rows, linked) VALUES (NEW.id, 0, 0);
END;
CREATE TRIGGER run_counts_insert AFTER INSERT ON run_rows BEGIN
    UPDATE run_counts SET rows = rows + 1, linked = linked + (NEW.golden_id IS NOT NULL) WHERE run_id = NEW.run_id;
END;
CREATE TRIGGER run_counts_delete AFTER DELETE ON run_rows BEGIN
    UPDATE run_counts SET rows = rows - 1, linked = linked - (OLD.golden_id IS NOT NULL) WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER run_counts_update AFTER UPDATE OF golden_id, run_id ON run_rows BEGIN
    UPDATE run_counts SET rows = rows - 1, linked = linked - (OLD.golden_id IS NOT NULL) WHERE run_id = OLD.run_id;
    UPDATE run_counts SET rows = rows + 1, linked = linked + (NEW.golden_id IS NOT NULL) WHERE run_id = NEW.run_id;
END;
"""

# v17: what a judgment says, without its texts: reads of verdicts (metrics, disagreements, a judge's column) find
# them by row in an index and never touch the table's rows, which hold the rationale and the raw output (a run's
# judgments at a million rows: 1.8 -> 1.2 s; disagreements at 200k rows: 0.50 -> 0.40 s).
SCHEMA_V17 = """
CREATE INDEX judgments_scores ON judgments (run_row_id, judge_id, passage_rank, status, score);
"""

# v18: the rest of what `info` counts, kept as rows change like v16's: counting two million judgments took 27 ms
# of a 0.1 s `info` on a 1 GB file, and grew with it. A trigger costs a bulk insert about 1 us a row (a judgment's
# insert by a job is tens of microseconds of the job's own work); an upsert that updates and an INSERT OR IGNORE
# that ignores fire no insert trigger; no statement here uses REPLACE, whose deletes fire no delete trigger.
SCHEMA_V18 = """
CREATE TABLE table_counts (
    name TEXT PRIMARY KEY,
    n    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO table_counts (name, n) SELECT 'judgments', COUNT(*) FROM judgments;
INSERT INTO table_counts (name, n) SELECT 'corpus_chunks', COUNT(*) FROM corpus_chunks;
INSERT INTO table_counts (name, n) SELECT 'human_ratings', COUNT(*) FROM human_ratings WHERE withdrawn_at IS NULL;
""" + "".join(f"""CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = '{table}';
END;
CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = '{table}';
END;
""" for table in ("judgments", "corpus_chunks")) + """
CREATE TRIGGER human_ratings_count_insert AFTER INSERT ON human_ratings WHEN NEW.withdrawn_at IS NULL BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'human_ratings';
END;
CREATE TRIGGER human_ratings_count_delete AFTER DELETE ON human_ratings WHEN OLD.withdrawn_at IS NULL BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'human_ratings';
END;
CREATE TRIGGER human_ratings_count_update AFTER UPDATE OF withdrawn_at ON human_ratings BEGIN
    UPDATE table_counts SET n = n + (NEW.withdrawn_at IS NULL) - (OLD.withdrawn_at IS NULL)
        WHERE name = 'human_ratings';
END;
"""

# v19: reviewers checked (issue 47). A check is a target shown in a reviewer's queue like any other — a gold item
# (a settled consensus) or one of their own earlier targets again — and rated blind; it is kept apart from
# human_ratings, so no audit, metric or sample ever counts it. A hold sets a reviewer's ratings of a metric aside:
# the ratings it withdrew are listed, so bringing the reviewer back restores exactly those.
SCHEMA_V19 = """
CREATE TABLE reviewer_checks (
    id            INTEGER PRIMARY KEY,
    reviewer      TEXT NOT NULL,
    metric        TEXT NOT NULL,
    run_row_id    INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    item          INTEGER NOT NULL DEFAULT 0,
    item_key      TEXT,
    kind          TEXT NOT NULL CHECK (kind IN ('gold', 'retest')),
    expected      REAL NOT NULL,
    score         REAL,
    seconds_taken REAL,
    sample_id     INTEGER REFERENCES review_samples (id) ON DELETE SET NULL,
    created_at    TEXT NOT NULL,
    withdrawn_at  TEXT
);
CREATE INDEX reviewer_checks_who ON reviewer_checks (reviewer, metric);
CREATE TABLE reviewer_holds (
    id           INTEGER PRIMARY KEY,
    reviewer     TEXT NOT NULL,
    metric       TEXT NOT NULL,
    reason       TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    lead         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    withdrawn_at TEXT
);
CREATE TABLE reviewer_hold_ratings (
    hold_id   INTEGER NOT NULL REFERENCES reviewer_holds (id) ON DELETE CASCADE,
    rating_id INTEGER NOT NULL REFERENCES human_ratings (id) ON DELETE CASCADE,
    PRIMARY KEY (hold_id, rating_id)
) WITHOUT ROWID;
CREATE INDEX reviewer_hold_ratings_rating ON reviewer_hold_ratings (rating_id);
"""

# v20: a confidence for every judgment (issue 47): how sure the judge was of this verdict, 0 to 1 — the share of
# repeated asks (a stability check) that agreed with it, the probability the model gave its verdict's side (token
# log-probabilities), or what a plug-in kind declared. NULL: none was measured or declared (selective judging then
# reads the score's distance from the pass mark, core.review.selective). A cached reply keeps its log-probabilities,
# so a judgment made from the cache has the same confidence.
SCHEMA_V20 = """
ALTER TABLE judgments ADD COLUMN confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1));
ALTER TABLE llm_cache ADD COLUMN logprobs TEXT;
"""

# v21: checks inside review packs (issue 47): which of a pack's positions are hidden gold items or retests, and what
# score each expects — kept in the project only, never in the pack (the reviewer cannot tell them from the sample's
# targets). A check answered in a pack comes back once per position (`origin` 'pack:<id>:pos<n>'), so importing the
# pack again, or after a re-rating, never counts it twice.
SCHEMA_V21 = """
CREATE TABLE review_pack_checks (
    pack_id  TEXT NOT NULL REFERENCES review_packs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('gold', 'retest')),
    expected REAL NOT NULL,
    PRIMARY KEY (pack_id, position)
) WITHOUT ROWID;
ALTER TABLE reviewer_checks ADD COLUMN origin TEXT;
CREATE UNIQUE INDEX reviewer_checks_origin ON reviewer_checks (origin) WHERE origin IS NOT NULL;
"""

# v22: a large run's per-row values kept once (issue 50): what `metrics`, `compare` and the dashboard read of a run —
# its rows' numbers (position, golden key, gold count, latency, cost, slice), the gold chunks each row retrieved and
# its judgments' verdicts — stored as columns (core.metrics.values) when the rows land and when a job ends, so a
# million-row run is read in a fraction of a second instead of being joined again. A part is stored only where it is
# current: the triggers take it away whenever what it was read from changes, and a read that finds none reads the
# tables as before. A part being written is NULL until its values are in (a change meanwhile takes the row away, and
# the values are then not kept). Passages are inserted only with their run's rows (the run's import), so the
# insert of a row covers them; a later migration that rebuilds judgments, run_rows, retrieved_passages or golden_rows
# must create these triggers again.
SCHEMA_V22 = """
CREATE TABLE run_values (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    part   TEXT NOT NULL CHECK (part IN ('rows', 'judgments', 'passages')),
    data   BLOB,
    PRIMARY KEY (run_id, part)
) WITHOUT ROWID;
CREATE TRIGGER run_values_new_run AFTER INSERT ON runs BEGIN
    DELETE FROM run_values WHERE run_id = NEW.id;
END;
CREATE TRIGGER run_values_run_gone AFTER DELETE ON runs BEGIN
    DELETE FROM run_values WHERE run_id = OLD.id;
END;
CREATE TRIGGER run_values_row_insert AFTER INSERT ON run_rows BEGIN
    DELETE FROM run_values WHERE run_id = NEW.run_id;
END;
CREATE TRIGGER run_values_row_update AFTER UPDATE ON run_rows BEGIN
    DELETE FROM run_values WHERE run_id IN (OLD.run_id, NEW.run_id);
END;
CREATE TRIGGER run_values_row_delete AFTER DELETE ON run_rows BEGIN
    DELETE FROM run_values WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER run_values_passage_update AFTER UPDATE ON retrieved_passages BEGIN
    DELETE FROM run_values WHERE part = 'passages'
        AND run_id IN (SELECT run_id FROM run_rows WHERE id IN (OLD.run_row_id, NEW.run_row_id));
END;
CREATE TRIGGER run_values_passage_delete AFTER DELETE ON retrieved_passages BEGIN
    DELETE FROM run_values WHERE part = 'passages'
        AND run_id = (SELECT run_id FROM run_rows WHERE id = OLD.run_row_id);
END;
CREATE TRIGGER run_values_judgment_insert AFTER INSERT ON judgments BEGIN
    DELETE FROM run_values WHERE part = 'judgments'
        AND run_id = (SELECT run_id FROM run_rows WHERE id = NEW.run_row_id);
END;
CREATE TRIGGER run_values_judgment_update AFTER UPDATE OF run_row_id, judge_id, passage_rank, status, score
        ON judgments BEGIN
    DELETE FROM run_values WHERE part = 'judgments'
        AND run_id IN (SELECT run_id FROM run_rows WHERE id IN (OLD.run_row_id, NEW.run_row_id));
END;
CREATE TRIGGER run_values_judgment_delete AFTER DELETE ON judgments BEGIN
    DELETE FROM run_values WHERE part = 'judgments'
        AND run_id = (SELECT run_id FROM run_rows WHERE id = OLD.run_row_id);
END;
CREATE TRIGGER run_values_golden_insert AFTER INSERT ON golden_rows BEGIN
    DELETE FROM run_values WHERE part IN ('rows', 'passages')
        AND run_id IN (SELECT run_id FROM run_rows WHERE golden_id = NEW.id);
END;
CREATE TRIGGER run_values_golden_update AFTER UPDATE OF id, gold_chunk_ids, slice_tag ON golden_rows BEGIN
    DELETE FROM run_values WHERE part IN ('rows', 'passages')
        AND run_id IN (SELECT run_id FROM run_rows WHERE golden_id IN (OLD.id, NEW.id));
END;
CREATE TRIGGER run_values_golden_delete AFTER DELETE ON golden_rows BEGIN
    DELETE FROM run_values WHERE part IN ('rows', 'passages')
        AND run_id IN (SELECT run_id FROM run_rows WHERE golden_id = OLD.id);
END;
"""

# Every session record in meta (an index range on its key): a process with the project open writes one (integrity),
# and a backup leaves them out (backup).
SESSION_KEYS = "key >= 'session/' AND key < 'session0'"

# What a judgment is unique by (the upserts' conflict target).
JUDGMENT_TARGET = "run_row_id, judge_id, passage_rank, idem_key"


# v23: a run's kept values in a table with rowids. In v22's WITHOUT ROWID table a row is its key, so every lookup
# compared its way down through whole rows, each a blob of megabytes read from its overflow pages: listing a million-row
# run's parts took 0.05 s, and fetching its three parts 0.10 s, growing with every large run kept. Here the key lives in
# an index and a lookup reads the one blob it asks for. The values are carried over; the triggers (v22) name the table,
# not its form, and are kept (the rename, in the legacy form, leaves them as they are).
SCHEMA_V23 = """
CREATE TABLE run_values_v23 (
    id     INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    part   TEXT NOT NULL CHECK (part IN ('rows', 'judgments', 'passages')),
    data   BLOB,
    UNIQUE (run_id, part)
);
INSERT INTO run_values_v23 (run_id, part, data) SELECT run_id, part, data FROM run_values;
DROP TABLE run_values;
PRAGMA legacy_alter_table = ON;
ALTER TABLE run_values_v23 RENAME TO run_values;
PRAGMA legacy_alter_table = OFF;
"""

# v24: what an export for an outside engine asked (issue 74). A results file is only ever an answer to requests the
# app wrote: each export is kept with its run and judges, and each request key it wrote; `--import-results` keeps a
# reply only under a key an export of that run planned, so a file cannot plant replies for requests never asked.
SCHEMA_V24 = """
CREATE TABLE outside_exports (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    judges     TEXT NOT NULL CHECK (json_valid(judges)),   -- [{name, fingerprint}]
    folder     TEXT NOT NULL,
    requests   INTEGER NOT NULL DEFAULT 0,
    complete   INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE outside_keys (
    key       TEXT NOT NULL,
    export_id INTEGER NOT NULL REFERENCES outside_exports (id) ON DELETE CASCADE,
    PRIMARY KEY (key, export_id)
) WITHOUT ROWID;
CREATE INDEX outside_keys_export ON outside_keys (export_id);
-- a review pack names its rows by ids of its own (drawn at random), so nothing in the file tells a hidden retest
-- from another run, or a gold item, from the sample's targets by its id; the project keeps the way back
CREATE TABLE review_pack_rows (
    pack_id    TEXT NOT NULL REFERENCES review_packs (id) ON DELETE CASCADE,
    local_id   INTEGER NOT NULL,
    run_row_id INTEGER NOT NULL,
    PRIMARY KEY (pack_id, local_id)
) WITHOUT ROWID;
"""


# pairwise review (issue 77): two runs' answers to one question, a reviewer's preference between them (blind to run
# and judge; `a_left` says which side the desk shows run A's answer on), and a pairwise judge's verdicts in both
# orders (`first`: A shown first; `second`: B shown first; `preference`: the two agreeing, else 'tie').
SCHEMA_V25 = """
CREATE TABLE pair_samples (
    id         INTEGER PRIMARY KEY,
    run_a      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    run_b      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seed       INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    CHECK (run_a <> run_b)
);
CREATE TABLE pair_sample_rows (
    sample_id INTEGER NOT NULL REFERENCES pair_samples (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    row_a     INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    row_b     INTEGER NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
    a_left    INTEGER NOT NULL CHECK (a_left IN (0, 1)),
    PRIMARY KEY (sample_id, position)
) WITHOUT ROWID;
CREATE TABLE pair_ratings (
    id            INTEGER PRIMARY KEY,
    sample_id     INTEGER NOT NULL REFERENCES pair_samples (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    reviewer      TEXT NOT NULL,
    preference    TEXT CHECK (preference IN ('a', 'b', 'tie')),
    skipped       INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1)),
    seconds_taken REAL,
    created_at    TEXT NOT NULL,
    withdrawn_at  TEXT,
    origin        TEXT,       -- 'pairpack:<pack id>:<rating id in the pack>': importing a pack twice adds nothing
    CHECK (skipped = 1 OR preference IS NOT NULL)
);
CREATE INDEX pair_ratings_target ON pair_ratings (sample_id, position, reviewer);
CREATE UNIQUE INDEX pair_ratings_origin ON pair_ratings (origin) WHERE origin IS NOT NULL;
-- pairwise review packs: what was exported to whom (the files hold the pairs as shown; the sides stay here)
CREATE TABLE pair_packs (
    id          TEXT PRIMARY KEY,
    sample_id   INTEGER REFERENCES pair_samples (id) ON DELETE SET NULL,
    reviewer    TEXT NOT NULL,
    pairs       INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    file_name   TEXT,
    created_at  TEXT NOT NULL,
    imported_at TEXT
);
CREATE TABLE pair_judgments (
    sample_id  INTEGER NOT NULL REFERENCES pair_samples (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    judge_id   INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    first      TEXT CHECK (first IN ('a', 'b', 'tie')),
    second     TEXT CHECK (second IN ('a', 'b', 'tie')),
    preference TEXT CHECK (preference IN ('a', 'b', 'tie')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (sample_id, position, judge_id)
) WITHOUT ROWID;
"""

@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sql: str
    foreign_keys_off: bool = False   # a table is rebuilt: FK actions must not fire while it is dropped


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", SCHEMA_V1),
    Migration(2, "embedding cache", SCHEMA_V2),
    Migration(3, "request cache, prices", SCHEMA_V3),
    Migration(4, "job hosts and leases", SCHEMA_V4),
    Migration(5, "nugget lists, judgment details, hhem judges", SCHEMA_V5, foreign_keys_off=True),
    Migration(6, "review targets: passages, nuggets, citations; nugget lists per judge; review packs", SCHEMA_V6),
    Migration(7, "inclusion probabilities of review samples", SCHEMA_V7),
    Migration(8, "golden-set vectors for the near-duplicate check", SCHEMA_V8),
    Migration(9, "batch jobs, batch prices", SCHEMA_V9),
    Migration(10, "an index of the passages' ids for metrics", SCHEMA_V10),
    Migration(11, "judgments unique by target and key", SCHEMA_V11, foreign_keys_off=True),
    Migration(12, "judge kinds from the registry of kinds (plug-ins)", SCHEMA_V12, foreign_keys_off=True),
    Migration(13, "undoable operations", SCHEMA_V13),
    Migration(14, "decisions on record", SCHEMA_V14),
    Migration(15, "judge checks: stability and probe runs", SCHEMA_V15),
    Migration(16, "counts kept as rows change (info at once on a large file)", SCHEMA_V16),
    Migration(17, "an index of judgments' verdicts (reads that need no text)", SCHEMA_V17),
    Migration(18, "judgments, chunks and ratings counted as they change (info flat on a large file)", SCHEMA_V18),
    Migration(19, "reviewers checked: gold items and retests, reviewers set aside", SCHEMA_V19),
    Migration(20, "a confidence for every judgment", SCHEMA_V20),
    Migration(21, "gold items and retests inside review packs", SCHEMA_V21),
    Migration(22, "a large run's per-row values kept once (metrics read them at once)", SCHEMA_V22),
    Migration(23, "a run's kept values looked up without reading the others", SCHEMA_V23),
    Migration(24, "the requests an export for an outside engine asked; review packs' own row ids", SCHEMA_V24),
    Migration(25, "pairwise review: pair samples, preferences, pairwise judgments and packs", SCHEMA_V25),
)

SCHEMA_VERSION = MIGRATIONS[-1].version


# The slices the guide names (easy, edge, ...): suggested when a curator tags a row, and the order dashboards use.
# A new project has none of them until its data (or a curator) brings them.
STANDARD_SLICES = ("easy", "edge", "adversarial", "time-sensitive", "multi-hop", "keyword-heavy")
