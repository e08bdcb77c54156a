//! Renders a `ReportModel` with the tera templates in templates/ (embedded at build time),
//! or as JSON for scripts.

use super::ReportModel;
use anyhow::Context;

const MD: &str = include_str!("../../../templates/report.md.tera");
const HTML: &str = include_str!("../../../templates/report.html.tera");

fn tera() -> anyhow::Result<tera::Tera> {
    let mut t = tera::Tera::default();
    t.add_raw_templates(vec![("report.md", MD), ("report.html", HTML)])
        .context("report templates do not parse")?;
    t.autoescape_on(vec!["report.html"]);
    crate::pipeline::report::filters::register(&mut t);
    Ok(t)
}

pub fn markdown(m: &ReportModel) -> anyhow::Result<String> {
    let cx = tera::Context::from_serialize(m)?;
    tera()?
        .render("report.md", &cx)
        .map_err(|e| anyhow::anyhow!("rendering report.md: {e:?}"))
}

pub fn html(m: &ReportModel) -> anyhow::Result<String> {
    let cx = tera::Context::from_serialize(m)?;
    tera()?
        .render("report.html", &cx)
        .map_err(|e| anyhow::anyhow!("rendering report.html: {e:?}"))
}

/// The model as JSON (pretty), without the charts' SVG: every table, verdict and scaling
/// model a report shows, for scripts. A chart is a field named `*_svg` wherever it sits in
/// the model (a workload's, a host test's, a cost section's), so every such field goes.
pub fn json(m: &ReportModel) -> anyhow::Result<String> {
    let mut v = serde_json::to_value(m)?;
    drop_charts(&mut v);
    Ok(serde_json::to_string_pretty(&v)?)
}

fn drop_charts(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            o.retain(|k, _| !k.ends_with("_svg"));
            o.values_mut().for_each(drop_charts);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_charts),
        _ => {}
    }
}
