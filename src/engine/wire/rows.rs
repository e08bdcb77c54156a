//! Rows as text, for the administrative client (`engine::admin`): the workload drains its
//! results without building rows; an administrative statement (SHOW STATUS, a variable's
//! value) needs what the server sent.

use super::{Conn, Error};

/// One row of a text-protocol result: each column's bytes, None for NULL.
pub type TextRow = Vec<Option<Vec<u8>>>;

impl Conn {
    /// Runs statement text (COM_QUERY) and returns the rows of its first result set (none
    /// for a statement without one); later results are read and dropped.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<TextRow>, Error> {
        let mut rows = Vec::new();
        if self.dry {
            return Ok(rows);
        }
        let b = self.f.begin();
        b.push(super::proto::COM_QUERY);
        b.extend_from_slice(sql.as_bytes());
        self.f.send()?;
        self.read_outcome(Some(&mut rows))?;
        Ok(rows)
    }
}
