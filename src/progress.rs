//! The progress bar of long sweeps and the Ctrl-C switch.
//!
//! A bar appears only when a person is watching: stderr is a terminal and the
//! output is not JSON. It never touches stdout, so piped output is unchanged.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::signals::{INTERRUPTED, STOP};

/// The first Ctrl-C (or SIGTERM) asks the sweep to stop and print what
/// ran; a second one quits at once ([`crate::signals`]).
pub fn install_ctrl_c() {
    crate::signals::install();
}

/// A bar over `total` schedules, or nothing when no one watches.
pub struct Progress {
    bar: Option<ProgressBar>,
    high: AtomicU64,
}

impl Progress {
    /// A progress bar over `total` schedules (a spinner when unknown), shown only when stderr is a terminal and not under `--json`.
    pub fn new(total: Option<u64>, json: bool) -> Progress {
        let watching = !json && std::io::stderr().is_terminal();
        let bar = watching.then(|| {
            let (bar, template) = match total {
                Some(n) => (
                    ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
                    "{bar:30} {human_pos}/{human_len} schedules, {per_sec:0}, ETA {eta}",
                ),
                None => (
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                    "{spinner} {human_pos} schedules, {per_sec:0}, {elapsed}",
                ),
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Progress {
            bar,
            high: AtomicU64::new(0),
        }
    }

    /// Called from worker threads; positions only move forward.
    pub fn update(&self, done: u64) {
        if let Some(bar) = &self.bar {
            let before = self.high.fetch_max(done, Ordering::Relaxed);
            if done > before {
                bar.set_position(done);
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
