//! Which points a sweep runs: include/exclude rules from the sweep file and `--only` from the
//! command line, both as `Filter`s.

/// One include/exclude rule: every key given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Filter {
    pub target: Option<String>,
    pub config: Option<String>,
    pub workload: Option<String>,
    pub threads: Option<Vec<u32>>,
}

impl Filter {
    pub fn matches(&self, target: &str, config: &str, workload: &str, threads: u32) -> bool {
        self.target.as_deref().is_none_or(|t| t == target)
            && self.config.as_deref().is_none_or(|c| c == config)
            && self.workload.as_deref().is_none_or(|w| w == workload)
            && self.threads.as_ref().is_none_or(|t| t.contains(&threads))
    }

    /// For a series whose thread counts are chosen while it runs (`threads = "auto"`): an
    /// include rule ignores its thread list; an exclude rule with one never excludes the
    /// whole series.
    pub fn matches_series(
        &self,
        target: &str,
        config: &str,
        workload: &str,
        exclude: bool,
    ) -> bool {
        (!exclude || self.threads.is_none())
            && self.target.as_deref().is_none_or(|t| t == target)
            && self.config.as_deref().is_none_or(|c| c == config)
            && self.workload.as_deref().is_none_or(|w| w == workload)
    }

    /// `key=value` from `--only` (threads may be a comma list).
    pub fn parse_only(s: &str) -> Result<Filter, String> {
        let mut f = Filter::default();
        for part in s.split_whitespace().flat_map(|p| p.split(';')) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("--only {s}: expected key=value"))?;
            match k {
                "target" => f.target = Some(v.into()),
                "config" => f.config = Some(v.into()),
                "workload" => f.workload = Some(v.into()),
                "threads" => {
                    f.threads = Some(
                        v.split(',')
                            .map(|t| {
                                t.trim()
                                    .parse()
                                    .map_err(|_| format!("--only {s}: '{t}' is not a thread count"))
                            })
                            .collect::<Result<_, _>>()?,
                    )
                }
                _ => {
                    return Err(format!(
                        "--only {s}: unknown key '{k}' (target, config, workload or threads)"
                    ))
                }
            }
        }
        Ok(f)
    }
}
