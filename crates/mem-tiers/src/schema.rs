//! The SQLite schema and its versioned migrations (`docs/formats/tiers.md`, "Schema").
//!
//! `PRAGMA user_version` holds the schema version and `PRAGMA application_id` marks the file as
//! mewmem's ([`APPLICATION_ID`]). Migrations run in order, each once, inside one
//! `BEGIN IMMEDIATE` transaction, so two processes opening an old database at once migrate it
//! once.

/// `PRAGMA application_id` of a mewmem tier database: ASCII `memt`.
pub const APPLICATION_ID: i64 = 0x6d65_6d74;

/// The migrations; `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4];

/// The first schema version whose deletes leave no text behind (version 3: `secure_delete` and
/// the FTS5 `secure-delete` option, the third of [`MIGRATIONS`]).
pub const SECURE_DELETE_VERSION: i64 = 3;

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// Version 1: projects, user preferences, learnings, the file states and documents of the
/// index, and the word index (`docs_word`: FTS5, `porter unicode61`, bm25).
const V1: &str = r#"
CREATE TABLE projects (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    language TEXT,
    framework TEXT,
    test_command TEXT,
    custom_commands TEXT NOT NULL DEFAULT '{}',
    notes TEXT NOT NULL DEFAULT '[]',
    created_ms INTEGER NOT NULL,
    last_used_ms INTEGER NOT NULL
);
CREATE INDEX projects_last_used ON projects(last_used_ms);

CREATE TABLE user_preferences (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
);

CREATE TABLE learnings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    category TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    context TEXT,
    project_key TEXT,
    created_ms INTEGER NOT NULL,
    last_used_ms INTEGER NOT NULL
);
CREATE INDEX learnings_created ON learnings(created_ms, id);
CREATE INDEX learnings_project ON learnings(project_key, created_ms, id);
CREATE INDEX learnings_category ON learnings(category, created_ms, id);

CREATE TABLE files (
    path TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX files_root ON files(root);

CREATE TABLE docs (
    rowid INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    scope TEXT NOT NULL,
    project_key TEXT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    path TEXT,
    updated_ms INTEGER NOT NULL
);
CREATE INDEX docs_path ON docs(path);
CREATE INDEX docs_source ON docs(source, updated_ms);

CREATE VIRTUAL TABLE docs_word USING fts5(
    title, body, content='docs', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER docs_word_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_word(rowid, title, body) VALUES (new.rowid, new.title, new.body);
END;
CREATE TRIGGER docs_word_ad AFTER DELETE ON docs BEGIN
    INSERT INTO docs_word(docs_word, rowid, title, body)
        VALUES ('delete', old.rowid, old.title, old.body);
END;
CREATE TRIGGER docs_word_au AFTER UPDATE OF title, body ON docs BEGIN
    INSERT INTO docs_word(docs_word, rowid, title, body)
        VALUES ('delete', old.rowid, old.title, old.body);
    INSERT INTO docs_word(rowid, title, body) VALUES (new.rowid, new.title, new.body);
END;

CREATE TRIGGER learnings_ai AFTER INSERT ON learnings BEGIN
    INSERT INTO docs(doc_id, source, scope, project_key, title, body, path, updated_ms)
    VALUES ('L' || new.id, 'learning',
            CASE WHEN new.project_key IS NULL THEN 'user' ELSE 'project' END,
            new.project_key, new.title,
            new.content || char(10) || coalesce(new.context, '') || char(10)
                || replace(replace(replace(replace(new.tags, '[', ''), ']', ''), '"', ''), ',', ' '),
            NULL, new.created_ms);
END;
CREATE TRIGGER learnings_ad AFTER DELETE ON learnings BEGIN
    DELETE FROM docs WHERE doc_id = 'L' || old.id;
END;
CREATE TRIGGER learnings_au AFTER UPDATE OF title, content, tags, context, project_key
ON learnings BEGIN
    UPDATE docs SET
        scope = CASE WHEN new.project_key IS NULL THEN 'user' ELSE 'project' END,
        project_key = new.project_key,
        title = new.title,
        body = new.content || char(10) || coalesce(new.context, '') || char(10)
            || replace(replace(replace(replace(new.tags, '[', ''), ']', ''), '"', ''), ',', ' ')
    WHERE doc_id = 'L' || old.id;
END;
"#;

/// Version 2: the trigram index (`docs_trigram`), so Chinese text, identifiers and paths are
/// found by substring; built from the documents already stored.
const V2: &str = r#"
CREATE VIRTUAL TABLE docs_trigram USING fts5(
    title, body, content='docs', content_rowid='rowid', tokenize='trigram'
);
CREATE TRIGGER docs_trigram_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_trigram(rowid, title, body) VALUES (new.rowid, new.title, new.body);
END;
CREATE TRIGGER docs_trigram_ad AFTER DELETE ON docs BEGIN
    INSERT INTO docs_trigram(docs_trigram, rowid, title, body)
        VALUES ('delete', old.rowid, old.title, old.body);
END;
CREATE TRIGGER docs_trigram_au AFTER UPDATE OF title, body ON docs BEGIN
    INSERT INTO docs_trigram(docs_trigram, rowid, title, body)
        VALUES ('delete', old.rowid, old.title, old.body);
    INSERT INTO docs_trigram(rowid, title, body) VALUES (new.rowid, new.title, new.body);
END;
INSERT INTO docs_trigram(docs_trigram) VALUES ('rebuild');
"#;

/// Version 3: both full-text indexes delete for good (FTS5's `secure-delete` option: a deleted
/// document's terms are removed from the index pages, not hidden behind a tombstone), and are
/// rebuilt from the documents, so the terms of items deleted before this version go too
/// (`mem memory forget` must purge a leaked secret; issue 27 item 3).
const V3: &str = r#"
INSERT INTO docs_word(docs_word, rank) VALUES ('secure-delete', 1);
INSERT INTO docs_trigram(docs_trigram, rank) VALUES ('secure-delete', 1);
INSERT INTO docs_word(docs_word) VALUES ('rebuild');
INSERT INTO docs_trigram(docs_trigram) VALUES ('rebuild');
"#;

/// Version 4: `docs_visibility`, a covering index of each document's visibility next to its
/// rowid (`rowid, project_key, source, scope`: about 50 bytes a document against the row's
/// whole text), so a full-text pass tests whether each match is visible (its project, user-wide,
/// its source and scope) by a lookup in this small index instead of in the documents themselves
/// (issue 29: at 1,000,000 learnings a common word's title pass joins 28,000 matches). The
/// search names it (`INDEXED BY`): SQLite's planner takes the table's own rowid lookup otherwise.
/// Built from the documents already stored, and kept in step by SQLite like any index (a
/// learning moved to another project, a deleted one).
const V4: &str = r#"
CREATE INDEX docs_visibility ON docs(rowid, project_key, source, scope);
"#;
