//! What ended a run or a connection: sysbench's FATAL line (or our own message) and, when a
//! server or the client library gave one, its error code — typed, so a results file and a
//! report group failures by code without reading it back out of the text.

/// An error that ends a run: the message as printed, and the MySQL error code behind it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fatal {
    pub message: String,
    /// The server's (or libmysqlclient's client-side: 2002, 2003, 2013…) error code.
    #[serde(default)]
    pub code: Option<u16>,
}

impl Fatal {
    pub fn new(message: impl Into<String>, code: Option<u16>) -> Fatal {
        Fatal {
            message: message.into(),
            code,
        }
    }

    /// The code of the first `Fatal` in an error's chain.
    pub fn code_in(e: &anyhow::Error) -> Option<u16> {
        e.chain()
            .find_map(|c| c.downcast_ref::<Fatal>())
            .and_then(|f| f.code)
    }
}

/// A message with no code (a panic, an overflowed queue).
impl From<String> for Fatal {
    fn from(message: String) -> Fatal {
        Fatal::new(message, None)
    }
}

impl From<&str> for Fatal {
    fn from(message: &str) -> Fatal {
        Fatal::new(message, None)
    }
}

impl std::fmt::Display for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fatal {}

/// Read as its message wherever text is wanted (`report.fatal.as_deref()`).
impl std::ops::Deref for Fatal {
    type Target = str;
    fn deref(&self) -> &str {
        &self.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_is_found_through_added_context() {
        let e = anyhow::Error::new(Fatal::new("cannot connect", Some(1040)))
            .context("point t64")
            .context("series a");
        assert_eq!(Fatal::code_in(&e), Some(1040));
        assert_eq!(Fatal::code_in(&anyhow::anyhow!("no code here")), None);
        assert_eq!(format!("{e:#}"), "series a: point t64: cannot connect");
    }
}
