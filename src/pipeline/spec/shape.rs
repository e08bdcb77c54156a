//! The server variables that decide the shape of a target's data — how its tables are made
//! (character set, row format, compression, tablespaces) and the datadir's own format (page
//! size) — and a config's data shape from them. A managed target prepares one copy of its
//! data per distinct shape among its configs, under the first config of that shape; a url
//! target's existing tables keep the shape they were made with, whatever SET GLOBAL says.

use super::Config;

/// One variable that shapes data, and why.
pub struct ShapeVar {
    pub name: &'static str,
    /// It lives in the datadir's format: a datadir made without it cannot start with it (so
    /// a fresh datadir is initialised with it), and SET GLOBAL cannot change it.
    pub format: bool,
    pub why: &'static str,
}

/// Every variable that shapes data: the one list `plan`, the preflight, the managed servers
/// and docs/sweeps.md read.
pub const VARS: &[ShapeVar] = &[
    ShapeVar {
        name: "character_set_server",
        format: false,
        why: "the database's default character set when prepare creates it, so the tables' and their text columns'",
    },
    ShapeVar {
        name: "collation_server",
        format: false,
        why: "the tables' collation: how k and c compare and sort, and the index's key width",
    },
    ShapeVar {
        name: "innodb_default_row_format",
        format: false,
        why: "ROW_FORMAT of tables made without one (COMPACT, DYNAMIC, REDUNDANT): row and page layout",
    },
    ShapeVar {
        name: "innodb_file_per_table",
        format: false,
        why: "whether each table gets its own .ibd or lives in the system tablespace",
    },
    ShapeVar {
        name: "innodb_compression_default",
        format: false,
        why: "page compression of tables made after it is set (MariaDB)",
    },
    ShapeVar {
        name: "innodb_page_size",
        format: true,
        why: "the page size of every tablespace, fixed when the datadir is initialised",
    },
    ShapeVar {
        name: "innodb_data_file_path",
        format: true,
        why: "the system tablespace's files, fixed at initialisation",
    },
    ShapeVar {
        name: "innodb_undo_tablespaces",
        format: true,
        why: "undo tablespaces outside the system tablespace, fixed at initialisation",
    },
    ShapeVar {
        name: "innodb_checksum_algorithm",
        format: true,
        why: "the page checksums the datadir was written with",
    },
    ShapeVar {
        name: "lower_case_table_names",
        format: true,
        why: "how table names are stored and compared, fixed when the datadir is initialised",
    },
];

fn var(name: &str) -> Option<&'static ShapeVar> {
    VARS.iter().find(|v| v.name.eq_ignore_ascii_case(name))
}

/// A value as the shape compares it: unquoted, lower case (`'8K'` and `8k` are one shape).
fn value(sql_literal: &str) -> String {
    crate::pipeline::server::mycnf::cnf_value(sql_literal).to_ascii_lowercase()
}

/// The variables of `config` that shape data, as (name, value), sorted by name.
pub fn shaping(config: &Config) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = config
        .vars
        .iter()
        .filter_map(|(k, v)| Some((var(k)?.name, value(v))))
        .collect();
    out.sort();
    out
}

/// A config's data shape, as a key: "" for the server's defaults, else `name=value,…`.
pub fn of(config: &Config) -> String {
    shaping(config)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The distinct shapes among `configs`, in the order their first config comes.
pub fn distinct(configs: &[Config]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in configs {
        let s = of(c);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

/// What initialises a datadir in `config`'s format: `--name=value` for each format variable
/// it sets (mariadb-install-db and mysqld --initialize pass them on to the bootstrap).
pub fn init_options(config: &Config) -> Vec<String> {
    shaping(config)
        .into_iter()
        .filter(|(k, _)| var(k).is_some_and(|v| v.format))
        .map(|(k, v)| format!("--{}={v}", k.replace('_', "-")))
        .collect()
}

/// The variables of `config` that cannot reach tables already made (a url target's: SET
/// GLOBAL changes what later CREATE TABLEs get, not the existing sbtest tables), by name.
pub fn unreachable(config: &Config) -> Vec<&'static str> {
    shaping(config).into_iter().map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str, vars: &[(&str, &str)]) -> Config {
        Config {
            name: name.into(),
            mycnf: None,
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// docs/sweeps.md lists every variable of the one list.
    #[test]
    fn the_docs_list_every_data_shaping_variable() {
        let docs = include_str!("../../../docs/sweeps.md");
        for v in VARS {
            assert!(
                docs.contains(&format!("| `{}` |", v.name)),
                "docs/sweeps.md does not list {}",
                v.name
            );
        }
    }

    /// Configs that differ in data-shaping variables have their own shape; those that differ
    /// only in others (a flush setting) share one; quoting and case are not a shape.
    #[test]
    fn a_configs_shape_is_its_data_shaping_variables() {
        let configs = [
            config("default", &[]),
            config("fast", &[("innodb_flush_log_at_trx_commit", "2")]),
            config(
                "latin1",
                &[
                    ("collation_server", "'latin1_swedish_ci'"),
                    ("character_set_server", "'latin1'"),
                ],
            ),
            config(
                "latin1-fast",
                &[
                    ("character_set_server", "LATIN1"),
                    ("collation_server", "latin1_swedish_ci"),
                    ("sync_binlog", "0"),
                ],
            ),
            config("8k", &[("innodb_page_size", "'8K'")]),
        ];
        assert_eq!(of(&configs[0]), "");
        assert_eq!(of(&configs[1]), "");
        assert_eq!(
            of(&configs[2]),
            "character_set_server=latin1,collation_server=latin1_swedish_ci"
        );
        assert_eq!(of(&configs[2]), of(&configs[3]));
        assert_eq!(distinct(&configs).len(), 3);
        assert_eq!(distinct(&[]), vec![String::new()]);
        assert_eq!(init_options(&configs[4]), vec!["--innodb-page-size=8k"]);
        assert!(init_options(&configs[2]).is_empty());
        assert_eq!(
            unreachable(&configs[3]),
            vec!["character_set_server", "collation_server"]
        );
    }
}
