//! Two small helpers the tables, summaries, study and charts share, so that each
//! is written once: the order rows first appear in, and how DSCP marking is shown.

/// The distinct items of `items` in the order they first appear (plan order for
/// a study's rows: schedulers, (scheduler, DSCP) pairs, families, swept values).
/// Quadratic, for the handful of items a table or chart has.
pub fn first_seen<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// DSCP marking as every output writes it: `on` or `off`.
pub fn on_off(dscp: bool) -> &'static str {
    if dscp { "on" } else { "off" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_seen_keeps_first_occurrences_in_order() {
        assert_eq!(first_seen([3, 1, 3, 2, 1]), [3, 1, 2]);
        assert_eq!(first_seen(Vec::<u8>::new()), Vec::<u8>::new());
        assert_eq!((on_off(true), on_off(false)), ("on", "off"));
    }
}
