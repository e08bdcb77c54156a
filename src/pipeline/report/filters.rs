//! The number formats every rendered page shares (report, compare, history), as tera
//! filters: `num` (precision by size), `signed` (+3.1 % / −4.0 %) and `coef` (a model's
//! coefficient to 3 significant digits).

use std::collections::HashMap;

/// Registers `num` and `signed` on `t`.
pub fn register(t: &mut tera::Tera) {
    t.register_filter("num", num);
    t.register_filter("signed", signed);
    t.register_filter("coef", coef);
}

/// `{{ x | coef }}`: 3 significant digits, in scientific notation below 0.001 (κ is often
/// 1e-5); "–" for none.
fn coef(v: &tera::Value, _: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
    Ok(tera::Value::String(match v.as_f64() {
        None => "–".to_string(),
        Some(0.0) => "0".to_string(),
        Some(x) if x.abs() < 1e-3 => format!("{x:.2e}"),
        Some(x) => {
            let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
            format!("{x:.digits$}")
        }
    }))
}

/// `{{ x | num }}`: a figure with precision that suits its size.
fn num(v: &tera::Value, _: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
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
fn signed(v: &tera::Value, _: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
    // A ratio's interval can run past any useful number: "unbounded" instead of 21 digits.
    Ok(tera::Value::String(match v.as_f64() {
        Some(x) => match crate::pipeline::judge::verdict::fmt_change(x) {
            t if t.ends_with("unbounded") => t,
            t => format!("{} %", t.replacen('-', "−", 1)),
        },
        None => String::new(),
    }))
}
