//! How `zr sessions` writes times, durations, costs and cut lines.

/// `text`'s first line, cut to `max` characters.
pub(crate) fn first_line(text: &str, max: usize) -> String {
    crate::render::plain::one_line(text.lines().next().unwrap_or_default(), max)
}

/// A start time as `YYYY-MM-DD HH:MM:SS` (UTC).
pub(crate) fn format_started(ms: Option<u64>) -> String {
    ms.and_then(|ms| i64::try_from(ms).ok())
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "-".to_owned(),
            |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
        )
}

/// A cost as `$0.1234`, `-` when unknown.
pub(crate) fn format_cost(cost: Option<f64>) -> String {
    cost.map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"))
}

/// A duration in milliseconds as `0.123 s`, `12.3 s` or `4 min 05 s`.
pub(crate) fn format_ms(ms: u64) -> String {
    match ms {
        0..10_000 => format!("{}.{:03} s", ms / 1000, ms % 1000),
        10_000..120_000 => format!("{}.{} s", ms / 1000, ms % 1000 / 100),
        _ => format!("{} min {:02} s", ms / 60_000, ms % 60_000 / 1000),
    }
}
