//! Progress for long commands: a bar on a terminal, nothing in a pipe (indicatif
//! hides its stderr target when stderr is not a terminal), so logs and CI output
//! stay clean.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `len` steps counted in `unit`, ticking on its own so elapsed time and
/// the spinner move during long steps.
pub fn bar(len: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let template = format!("{{spinner}} {{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} (eta {{eta}})");
    bar.set_style(ProgressStyle::with_template(&template).expect("a valid template").progress_chars("=> "));
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
