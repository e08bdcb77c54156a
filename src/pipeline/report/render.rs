//! Renders a `ReportModel` with the tera templates in templates/ (embedded at build time).

use super::ReportModel;
use anyhow::Context;

const MD: &str = include_str!("../../../templates/report.md.tera");
const HTML: &str = include_str!("../../../templates/report.html.tera");

fn tera() -> anyhow::Result<tera::Tera> {
    let mut t = tera::Tera::default();
    t.add_raw_templates(vec![("report.md", MD), ("report.html", HTML)])
        .context("report templates do not parse")?;
    t.autoescape_on(vec!["report.html"]);
    crate::pipeline::filters::register(&mut t);
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
