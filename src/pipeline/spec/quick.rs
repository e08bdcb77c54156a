//! A sweep from the command line (`run --url …`): the equivalent sweep file's text, so a quick
//! sweep of an existing server is parsed, checked, run and stored (as sweep.toml) exactly as a
//! written one.

/// What `--url` and its companions say; None leaves the sweep file's default.
#[derive(Debug, Clone, Default)]
pub struct QuickSweep {
    pub url: String,
    pub name: String,
    pub workloads: Vec<String>,
    pub threads: Vec<u32>,
    pub duration: Option<String>,
    pub repeats: Option<u32>,
    pub tables: Option<u32>,
    pub table_size: Option<u32>,
}

fn lit(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

impl QuickSweep {
    /// The sweep file this command line stands for.
    pub fn sweep_text(&self) -> String {
        let mut t = format!(
            "# Written by `sweepbench run --url …`; run it again with `sweepbench run <this file>`.\nname = {}\n",
            lit(&self.name)
        );
        if self.tables.is_some() || self.table_size.is_some() {
            t.push_str("[data]\n");
            if let Some(n) = self.tables {
                t.push_str(&format!("tables = {n}\n"));
            }
            if let Some(n) = self.table_size {
                t.push_str(&format!("table_size = {n}\n"));
            }
        }
        let workloads: Vec<String> = self.workloads.iter().map(|w| lit(w)).collect();
        let threads: Vec<String> = self.threads.iter().map(u32::to_string).collect();
        t.push_str(&format!(
            "[run]\nworkloads = [{}]\nthreads = [{}]\n",
            workloads.join(", "),
            threads.join(", ")
        ));
        if let Some(d) = &self.duration {
            t.push_str(&format!("duration = {}\n", lit(d)));
        }
        if let Some(r) = self.repeats {
            t.push_str(&format!("repeats = {r}\n"));
        }
        t.push_str(&format!(
            "[[targets]]\nname = \"target\"\nurl = {}\n",
            lit(&self.url)
        ));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::spec::SweepSpec;

    #[test]
    fn a_command_line_sweep_is_a_sweep_file() {
        let q = QuickSweep {
            url: "mysql://bench:p w@db:3307/perf".into(),
            name: "quick".into(),
            workloads: vec!["oltp_read_only".into()],
            threads: vec![1, 4, 16],
            duration: Some("30s".into()),
            repeats: Some(2),
            tables: None,
            table_size: Some(5000),
        };
        let s = SweepSpec::parse(std::path::Path::new("--url"), &q.sweep_text()).unwrap();
        assert_eq!(s.name, "quick");
        assert_eq!(s.run.threads, [1, 4, 16]);
        assert_eq!((s.run.duration_s, s.run.repeats), (30, 2));
        assert_eq!((s.data.tables, s.data.table_size), (1, 5000));
        assert!(!s.source.contains("p w"), "{}", s.source);
        let bad = QuickSweep {
            workloads: vec!["oltp_read_onyl".into()],
            ..q
        };
        let e = SweepSpec::parse(std::path::Path::new("--url"), &bad.sweep_text()).unwrap_err();
        assert!(e.message.contains("did you mean 'oltp_read_only'"), "{e}");
    }
}
