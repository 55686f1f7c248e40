//! Row mapping shared by the two backends: the column lists of each record and one function
//! per record turning a result row into it, over a small [`Columns`] trait that
//! `rusqlite::Row` and `postgres::Row` both implement. A column of the wrong type or a JSON
//! column that does not parse is an error naming the column, never a panic or a silent default.

use crate::model::{Document, FileState, LearningEntry, ProjectRecord, SearchHit, SourceKind};

/// Read access to the columns of one result row, by 0-based index.
pub(crate) trait Columns {
    /// The backend's error.
    type Error;
    /// A `TEXT NOT NULL` column.
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    /// A nullable `TEXT` column.
    fn opt_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    /// An integer column (SQLite `INTEGER`, PostgreSQL `BIGINT`).
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    /// A floating-point column (a rank).
    fn float(&self, i: usize) -> Result<f64, Self::Error>;
    /// How many columns the row has.
    fn width(&self) -> usize;
    /// The error for column `i` holding a value that does not fit (`message` says why).
    fn invalid(&self, i: usize, message: String) -> Self::Error;
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn float(&self, i: usize) -> rusqlite::Result<f64> {
        self.get(i)
    }
    fn width(&self) -> usize {
        self.as_ref().column_count()
    }
    fn invalid(&self, i: usize, message: String) -> rusqlite::Error {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, message.into())
    }
}

impl Columns for postgres::Row {
    type Error = String;
    fn text(&self, i: usize) -> Result<String, String> {
        self.try_get(i).map_err(|e| column_error(self, i, &e))
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>, String> {
        self.try_get(i).map_err(|e| column_error(self, i, &e))
    }
    fn int(&self, i: usize) -> Result<i64, String> {
        self.try_get(i).map_err(|e| column_error(self, i, &e))
    }
    fn float(&self, i: usize) -> Result<f64, String> {
        self.try_get(i).map_err(|e| column_error(self, i, &e))
    }
    fn width(&self) -> usize {
        self.len()
    }
    fn invalid(&self, i: usize, message: String) -> String {
        column_error(self, i, &message)
    }
}

fn column_error(row: &postgres::Row, i: usize, e: &dyn std::fmt::Display) -> String {
    let name = row.columns().get(i).map_or("?", |c| c.name());
    format!("column {name}: {e}")
}

/// The columns of [`project`], in order.
pub(crate) const PROJECT_COLS: &str = "key, name, path, language, framework, test_command, \
                                       custom_commands, notes, created_ms, last_used_ms";

/// The columns of [`learning`], in order; a backend with authors and teams appends
/// `, author, team` ([`LEARNING_COLS_TEAM`]).
pub(crate) const LEARNING_COLS: &str =
    "id, title, content, category, tags, context, project_key, created_ms, last_used_ms";

/// [`LEARNING_COLS`] with the author and team of the team store.
pub(crate) const LEARNING_COLS_TEAM: &str = "id, title, content, category, tags, context, \
                                            project_key, created_ms, last_used_ms, author, team";

/// The columns of [`document`], in order.
pub(crate) const DOC_COLS: &str =
    "doc_id, source, scope, project_key, title, body, path, updated_ms";

/// The columns of [`file_state`], in order.
pub(crate) const FILE_COLS: &str = "path, root, size, mtime_ns, hash";

fn json_col<T: serde::de::DeserializeOwned, C: Columns + ?Sized>(
    r: &C,
    i: usize,
) -> Result<T, C::Error> {
    let s = r.text(i)?;
    serde_json::from_str(&s).map_err(|e| r.invalid(i, format!("invalid JSON: {e}")))
}

/// A value as the JSON text stored in a `TEXT` column (tags, notes, custom commands).
pub(crate) fn to_json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    // Serialising strings, lists and maps of strings cannot fail.
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned())
}

/// The source kind in column `i`.
pub(crate) fn source<C: Columns + ?Sized>(r: &C, i: usize) -> Result<SourceKind, C::Error> {
    let s = r.text(i)?;
    SourceKind::parse(&s).ok_or_else(|| r.invalid(i, format!("unknown source kind {s:?}")))
}

/// A project from the [`PROJECT_COLS`] columns.
pub(crate) fn project<C: Columns + ?Sized>(r: &C) -> Result<ProjectRecord, C::Error> {
    Ok(ProjectRecord {
        key: r.text(0)?,
        name: r.text(1)?,
        path: r.text(2)?,
        language: r.opt_text(3)?,
        framework: r.opt_text(4)?,
        test_command: r.opt_text(5)?,
        custom_commands: json_col(r, 6)?,
        notes: json_col(r, 7)?,
        created_ms: r.int(8)?,
        last_used_ms: r.int(9)?,
    })
}

/// A learning from the [`LEARNING_COLS`] columns, with its author and team when the row has
/// the two more columns of [`LEARNING_COLS_TEAM`].
pub(crate) fn learning<C: Columns + ?Sized>(r: &C) -> Result<LearningEntry, C::Error> {
    let team_columns = r.width() >= 11;
    Ok(LearningEntry {
        id: r.int(0)?,
        title: r.text(1)?,
        content: r.text(2)?,
        category: r.text(3)?,
        tags: json_col(r, 4)?,
        context: r.opt_text(5)?,
        project_key: r.opt_text(6)?,
        created_ms: r.int(7)?,
        last_used_ms: r.int(8)?,
        author: if team_columns { r.opt_text(9)? } else { None },
        team: if team_columns { r.opt_text(10)? } else { None },
    })
}

/// A document from the [`DOC_COLS`] columns.
pub(crate) fn document<C: Columns + ?Sized>(r: &C) -> Result<Document, C::Error> {
    Ok(Document {
        id: r.text(0)?,
        source: source(r, 1)?,
        scope: r.text(2)?,
        project_key: r.opt_text(3)?,
        title: r.text(4)?,
        body: r.text(5)?,
        path: r.opt_text(6)?,
        updated_ms: r.int(7)?,
    })
}

/// A file state from the [`FILE_COLS`] columns.
pub(crate) fn file_state<C: Columns + ?Sized>(r: &C) -> Result<FileState, C::Error> {
    let size = r.int(2)?;
    Ok(FileState {
        path: r.text(0)?,
        root: r.text(1)?,
        size: u64::try_from(size).map_err(|_| r.invalid(2, format!("negative size {size}")))?,
        mtime_ns: r.int(3)?,
        hash: r.text(4)?,
    })
}

/// A search hit from the columns `doc_id, source, scope, title, <snippet>, path, updated_ms,
/// score` (the snippet column may hold the whole body for the caller to cut).
pub(crate) fn search_hit<C: Columns + ?Sized>(r: &C) -> Result<SearchHit, C::Error> {
    Ok(SearchHit {
        id: r.text(0)?,
        source: source(r, 1)?,
        scope: r.text(2)?,
        title: r.text(3)?,
        snippet: r.text(4)?,
        path: r.opt_text(5)?,
        updated_ms: r.int(6)?,
        score: r.float(7)?,
    })
}

/// A source filter as one string `,learning,note,` (empty: every source), for
/// `instr(?, ',' || source || ',')` / `strpos`.
pub(crate) fn source_list(sources: &[SourceKind]) -> String {
    if sources.is_empty() {
        return String::new();
    }
    let mut s = String::from(",");
    for k in sources {
        s.push_str(k.as_str());
        s.push(',');
    }
    s
}
