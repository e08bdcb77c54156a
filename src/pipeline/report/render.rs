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
    t.register_filter("num", num);
    t.register_filter("signed", signed);
    Ok(t)
}

/// `{{ x | num }}`: a figure with precision that suits its size.
pub(crate) fn num(
    v: &tera::Value,
    _: &std::collections::HashMap<String, tera::Value>,
) -> tera::Result<tera::Value> {
    let x = v.as_f64().unwrap_or(0.0);
    let s = if x >= 1000.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    Ok(tera::Value::String(s))
}

/// `{{ pct | signed }}`: +3.1 % / −4.0 %, empty for none.
pub(crate) fn signed(
    v: &tera::Value,
    _: &std::collections::HashMap<String, tera::Value>,
) -> tera::Result<tera::Value> {
    Ok(tera::Value::String(match v.as_f64() {
        Some(x) if x >= 0.0 => format!("+{x:.1} %"),
        Some(x) => format!("−{:.1} %", -x),
        None => String::new(),
    }))
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
