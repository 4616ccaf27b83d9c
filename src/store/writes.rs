//! The write generations of this process: every write through a store moves on the
//! generation of the store's location (its directory or file; one shared generation for
//! stores without one: memory, object stores) when it starts and when it ends, so that data
//! kept from earlier reads (the decoded chunks of [`crate::io::cache`]) knows it may be
//! stale. Locations nested in one another count as one: a write below a directory changes
//! what a store at the directory holds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    generation: u64,
    in_progress: usize,
}

#[derive(Debug, Default)]
struct State {
    unlocated: Counts,
    located: HashMap<PathBuf, Counts>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(State::default))
}

/// A write in progress at a location, from [`Write::begin`] until it is dropped.
#[derive(Debug)]
pub struct Write(Option<PathBuf>);

impl Write {
    /// Marks a write at `location` (the store's [`crate::store::Store::location`]) as
    /// started; stores call it first thing in every method that changes what they hold.
    pub fn begin(location: Option<PathBuf>) -> Write {
        with_state(|state| {
            let counts = match &location {
                None => &mut state.unlocated,
                Some(path) => state.located.entry(path.clone()).or_default(),
            };
            counts.in_progress += 1;
            counts.generation += 1;
        });
        Write(location)
    }
}

impl Drop for Write {
    fn drop(&mut self) {
        with_state(|state| {
            let counts = match &self.0 {
                None => &mut state.unlocated,
                Some(path) => state.located.entry(path.clone()).or_default(),
            };
            counts.generation += 1;
            counts.in_progress -= 1;
        });
    }
}

/// The write generation of `location` (and the locations nested with it), or `None` while
/// a write there is in progress.
pub fn generation(location: Option<&Path>) -> Option<u64> {
    with_state(|state| {
        let mut total = Counts::default();
        match location {
            None => total = state.unlocated,
            Some(path) => {
                for (other, counts) in &state.located {
                    if other.starts_with(path) || path.starts_with(other) {
                        total.generation += counts.generation;
                        total.in_progress += counts.in_progress;
                    }
                }
            }
        }
        (total.in_progress == 0).then_some(total.generation)
    })
}
