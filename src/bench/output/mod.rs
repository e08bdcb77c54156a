//! Terminal output of `bench`: sysbench 1.0's exact text layout, and JSON with the same
//! figures plus more percentiles and the interval series.

pub mod json;
pub mod sysbench;
