//! Progress of long commands on a terminal: the stored objects done in the unit the array
//! is stored in (`chunks`, or `shards` when sharded), and the bytes they hold with their
//! rate in MB/s (a count of large shards alone would show `0/s` for minutes).

use indicatif::{DecimalBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use zarr::meta::ArrayMeta;

/// A progress bar on standard error (hidden when it is not a terminal).
pub(crate) struct Progress {
    bar: ProgressBar,
    /// Bytes done (the decoded size of the items of the objects done).
    bytes: Arc<AtomicU64>,
    /// What one step is: `chunks` or `shards`.
    unit: &'static str,
}

/// What one stored object of the array `meta` is called.
pub(crate) fn unit_of(meta: &ArrayMeta) -> &'static str {
    match meta.sharding() {
        Some(_) => "shards",
        None => "chunks",
    }
}

/// The decoded bytes of a region of `count` items of `item_size` bytes (saturating: it is
/// only shown).
pub(crate) fn region_bytes(count: &[u64], item_size: usize) -> u64 {
    count
        .iter()
        .fold(item_size as u64, |n, &c| n.saturating_mul(c))
}

/// `bytes` and their rate over `secs` seconds, as shown: `12.35 MB at 3.09 MB/s`.
fn bytes_text(bytes: u64, secs: f64) -> String {
    let rate = if secs > 0.0 {
        (bytes as f64 / secs) as u64
    } else {
        0
    };
    format!("{} at {}/s", DecimalBytes(bytes), DecimalBytes(rate))
}

impl Progress {
    /// A bar of `len` objects named `unit` (see [`unit_of`]), labelled `what`.
    pub(crate) fn new(len: u64, unit: &'static str, what: &str) -> Self {
        let bytes = Arc::new(AtomicU64::new(0));
        let bar = match std::io::stderr().is_terminal() {
            true => ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()),
            false => ProgressBar::hidden(),
        };
        let progress = Progress { bar, bytes, unit };
        progress.style("[{bar:30}] {pos}/{len} {unit}, {bytes} ETA {eta}");
        progress.bar.set_message(what.to_string());
        progress
    }

    /// Sets the bar's template (`{unit}` and `{bytes}` filled in here).
    fn style(&self, template: &str) {
        let template = format!("{{msg}} {}", template.replace("{unit}", self.unit));
        let bytes = self.bytes.clone();
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key(
                "bytes",
                move |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let done = bytes.load(Ordering::Relaxed);
                    let _ = w.write_str(&bytes_text(done, state.elapsed().as_secs_f64()));
                },
            )
            .progress_chars("=> ");
        self.bar.set_style(style);
    }

    /// Counts `objects` more done, holding `bytes`.
    pub(crate) fn inc(&self, objects: u64, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.bar.inc(objects);
    }

    /// Ends the bar, leaving a one-line summary (counts, bytes, rate and time taken).
    pub(crate) fn finish(&self) {
        if self.bar.is_hidden() {
            return;
        }
        self.style("[{bar:30}] {pos}/{len} {unit}, {bytes} in {elapsed}");
        self.bar.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_show_with_their_rate_in_mb_per_second() {
        assert_eq!(bytes_text(12_345_678, 4.0), "12.35 MB at 3.09 MB/s");
        assert_eq!(bytes_text(0, 0.0), "0 B at 0 B/s");
        // Two large shards in a minute: a rate, not `0/s`.
        assert_eq!(bytes_text(2_000_000_000, 60.0), "2.00 GB at 33.33 MB/s");
        assert_eq!(region_bytes(&[2, 3], 4), 24);
        assert_eq!(region_bytes(&[u64::MAX, 2], 8), u64::MAX);
    }
}
