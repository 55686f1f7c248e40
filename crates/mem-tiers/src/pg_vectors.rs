//! The embedding cache on PostgreSQL (issue 29, Build 2): the table `vectors` of the store's
//! schema, keyed by (content hash, model), the vector as `bytea` of little-endian `f32`s, as on
//! SQLite ([`crate::vectors`]). Similarity is computed by the client (mewmem), whether or not
//! the `vector` extension (pgvector) is installed; [`has_pgvector`] reports it.
//!
//! The table is created on the first write (`CREATE TABLE IF NOT EXISTS`); a read of a schema
//! without it finds nothing and writes nothing. Shared by the team like the rest of the schema:
//! the rows hold vectors, never text.

use std::collections::HashMap;

use crate::error::Result;
use crate::postgres::PgStore;

/// Whether the database has the `vector` extension (pgvector) installed.
///
/// # Errors
/// The server's.
pub fn has_pgvector(store: &PgStore) -> Result<bool> {
    store.with_client(|c| {
        Ok(
            c.query_opt("SELECT 1 FROM pg_extension WHERE extname = 'vector'", &[])?
                .is_some(),
        )
    })
}

fn table(store: &PgStore) -> String {
    format!("\"{}\".vectors", store.schema())
}

impl mem_llm::VectorCache for PgStore {
    fn vectors(
        &self,
        model: &str,
        hashes: &[String],
    ) -> std::result::Result<HashMap<String, Vec<f32>>, String> {
        if hashes.is_empty() {
            return Ok(HashMap::new());
        }
        let table = table(self);
        let regclass = format!("{}.vectors", self.schema());
        let model = model.to_owned();
        let hashes = hashes.to_vec();
        self.with_client(move |c| {
            let exists: bool = c
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&regclass])?
                .get(0);
            let mut out = HashMap::new();
            if !exists {
                return Ok(out);
            }
            let rows = c.query(
                &format!("SELECT hash, vector FROM {table} WHERE model = $1 AND hash = ANY($2)"),
                &[&model, &hashes],
            )?;
            for row in rows {
                let hash: String = row.get(0);
                let bytes: Vec<u8> = row.get(1);
                if let Some(v) = mem_llm::embed::vector_from_bytes(&bytes) {
                    out.insert(hash, v);
                }
            }
            Ok(out)
        })
        .map_err(|e| e.to_string())
    }

    fn store_vectors(
        &self,
        model: &str,
        rows: &[(String, Vec<f32>)],
    ) -> std::result::Result<(), String> {
        if rows.is_empty() {
            return Ok(());
        }
        let table = table(self);
        let model = model.to_owned();
        let rows: Vec<(String, i32, Vec<u8>)> = rows
            .iter()
            .map(|(h, v)| {
                (
                    h.clone(),
                    i32::try_from(v.len()).unwrap_or(i32::MAX),
                    mem_llm::embed::vector_to_bytes(v),
                )
            })
            .collect();
        self.with_client(move |c| {
            c.batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {table} (
                    hash TEXT NOT NULL,
                    model TEXT NOT NULL,
                    dim INTEGER NOT NULL,
                    vector BYTEA NOT NULL,
                    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    PRIMARY KEY (hash, model)
                )"
            ))?;
            let mut tx = c.transaction()?;
            let stmt = tx.prepare(&format!(
                "INSERT INTO {table} (hash, model, dim, vector) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (hash, model) DO UPDATE SET dim = EXCLUDED.dim, \
                 vector = EXCLUDED.vector"
            ))?;
            for (h, dim, bytes) in &rows {
                tx.execute(&stmt, &[h, &model, dim, bytes])?;
            }
            tx.commit()
        })
        .map_err(|e| e.to_string())
    }

    fn forget_vectors(&self, hashes: &[String]) -> std::result::Result<u64, String> {
        if hashes.is_empty() {
            return Ok(0);
        }
        let table = table(self);
        let regclass = format!("{}.vectors", self.schema());
        let hashes = hashes.to_vec();
        self.with_client(move |c| {
            let exists: bool = c
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&regclass])?
                .get(0);
            if !exists {
                return Ok(0);
            }
            c.execute(
                &format!("DELETE FROM {table} WHERE hash = ANY($1)"),
                &[&hashes],
            )
        })
        .map_err(|e| e.to_string())
    }
}
