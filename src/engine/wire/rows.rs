//! Rows as text, for the administrative client (`engine::admin`): the workload drains its
//! results without building rows; an administrative statement (SHOW STATUS, a variable's
//! value) needs what the server sent.

use super::packet::Reader;
use super::{eof_status, Conn, Error, SERVER_MORE_RESULTS_EXISTS};

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
        b.push(0x03);
        b.extend_from_slice(sql.as_bytes());
        self.f.send()?;
        let mut first = true;
        loop {
            let r = self.f.next()?;
            let p = self.f.payload(r);
            let status = match p.first() {
                Some(0x00) => {
                    let mut rd = Reader { buf: &p[1..] };
                    rd.lenenc()?;
                    rd.lenenc()?;
                    rd.u16()?
                }
                Some(0xFF) => return Err(Error::from_err_packet(p)),
                Some(0xFB) => {
                    // LOAD DATA LOCAL: we send no file; the server answers with its result.
                    self.f.begin_reply();
                    self.f.send()?;
                    continue;
                }
                _ => {
                    let columns = Reader { buf: p }.lenenc()? as usize;
                    for _ in 0..columns {
                        self.f.next()?;
                    }
                    self.eof()?;
                    self.text_rows(columns, first.then_some(&mut rows))?
                }
            };
            first = false;
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(rows);
            }
        }
    }

    /// Reads rows up to the EOF packet, into `into` when given; the EOF's status flags.
    fn text_rows(
        &mut self,
        columns: usize,
        mut into: Option<&mut Vec<TextRow>>,
    ) -> Result<u16, Error> {
        loop {
            let r = self.f.next()?;
            let p = self.f.payload(r);
            match p.first() {
                Some(0xFE) if p.len() < 9 => return Ok(eof_status(p)),
                Some(0xFF) => return Err(Error::from_err_packet(p)),
                _ => {}
            }
            let Some(rows) = into.as_deref_mut() else {
                continue;
            };
            let mut rd = Reader { buf: p };
            let mut row = Vec::with_capacity(columns);
            for _ in 0..columns {
                if rd.buf.first() == Some(&0xFB) {
                    rd.u8()?;
                    row.push(None);
                } else {
                    let n = rd.lenenc()? as usize;
                    row.push(Some(rd.bytes(n)?.to_vec()));
                }
            }
            rows.push(row);
        }
    }
}
