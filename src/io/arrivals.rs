//! The hand-over between the threads that fetch the parts of a region read from an object
//! store and the workers that decode them: parts are taken in the order they arrive, and
//! the bytes reserved for parts being fetched or waiting to be decoded are bounded. A part
//! reserves what it may hold before its request starts (its length when known, else the
//! most it may take) and counts, once it arrives, at what it holds.

use super::shard::Prefetched;
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Parts of a read that arrived and wait to be decoded, and the bytes reserved for them.
pub(super) struct Arrivals {
    state: Mutex<State>,
    /// Signalled when bytes are given back (or the read stops).
    room: Condvar,
    /// Signalled when a part arrives (or the read stops).
    arrived: Condvar,
    /// The most bytes reserved at once (a single reservation may be larger).
    budget: u64,
}

#[derive(Default)]
struct State {
    /// Arrived parts: their numbers, what was fetched for each and the bytes it counts at
    /// (given back once it is decoded).
    queue: VecDeque<(usize, Prefetched, u64)>,
    /// Bytes reserved by fetches started and not yet given back by the decoding.
    reserved: u64,
    /// Whether the read has ended early: no more is fetched, handed over or taken.
    stopped: bool,
    /// The first error recorded (of a fetch or of a decoding), when one ended the read.
    failure: Option<Error>,
}

impl Arrivals {
    /// Hand-over for a read that reserves at most `budget` bytes at once for parts being
    /// fetched or waiting to be decoded.
    pub(super) fn new(budget: u64) -> Self {
        Arrivals {
            state: Mutex::new(State::default()),
            room: Condvar::new(),
            arrived: Condvar::new(),
            budget,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one still holds sound state.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until `bytes` more fit in the budget (or nothing is reserved, or `bytes` is 0),
    /// then reserves them; false (nothing reserved) once the read has stopped.
    pub(super) fn reserve(&self, bytes: u64) -> bool {
        let mut state = self.state();
        loop {
            if state.stopped {
                return false;
            }
            if bytes == 0
                || state.reserved == 0
                || state.reserved.saturating_add(bytes) <= self.budget
            {
                state.reserved = state.reserved.saturating_add(bytes);
                return true;
            }
            state = self
                .room
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Gives back `bytes` of a reservation (a part decoded).
    pub(super) fn release(&self, bytes: u64) {
        let mut state = self.state();
        self.release_with(&mut state, bytes);
    }

    fn release_with(&self, state: &mut State, bytes: u64) {
        if bytes > 0 {
            state.reserved = state.reserved.saturating_sub(bytes);
            self.room.notify_all();
        }
    }

    /// Hands over what was fetched for part number `part`, for which `reserved` bytes were
    /// reserved: from now on it counts at the bytes it holds (what it does not hold is given
    /// back, what it holds beyond is added) until [`Arrivals::release`] (dropped once the
    /// read has stopped).
    pub(super) fn arrive(&self, part: usize, fetched: Prefetched, reserved: u64) {
        let mut state = self.state();
        if !state.stopped {
            let held = fetched.held_len().unwrap_or(reserved);
            if held > reserved {
                state.reserved = state.reserved.saturating_add(held - reserved);
            } else {
                self.release_with(&mut state, reserved - held);
            }
            state.queue.push_back((part, fetched, held));
            self.arrived.notify_one();
        }
    }

    /// Ends the read early: waiting fetches and takers return, and what arrived is dropped.
    pub(super) fn stop(&self) {
        self.stop_with(&mut self.state());
    }

    fn stop_with(&self, state: &mut State) {
        state.stopped = true;
        state.queue.clear();
        self.room.notify_all();
        self.arrived.notify_all();
    }

    /// Ends the read with `error` (the first one is kept, and [`Arrivals::failure`] gives
    /// it).
    pub(super) fn fail(&self, error: Error) {
        let mut state = self.state();
        state.failure.get_or_insert(error);
        self.stop_with(&mut state);
    }

    /// The next part to arrive and the bytes it counts at, waiting for it; `None` once the
    /// read has stopped.
    pub(super) fn take(&self) -> Option<(usize, Prefetched, u64)> {
        let mut state = self.state();
        loop {
            if state.stopped {
                return None;
            }
            if let Some(next) = state.queue.pop_front() {
                return Some(next);
            }
            state = self
                .arrived
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// The bytes reserved now: none once every part reserved for was decoded.
    pub(super) fn reserved(&self) -> u64 {
        self.state().reserved
    }

    /// The error that ended the read, if one did.
    pub(super) fn failure(&self) -> Result<()> {
        match self.state().failure.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// A guard that stops the read when dropped: on every way out of the read, so that no
    /// fetcher waits for room that will never come.
    pub(super) fn stop_on_drop(&self) -> StopOnDrop<'_> {
        StopOnDrop(self)
    }
}

/// Stops the read of its [`Arrivals`] when dropped.
pub(super) struct StopOnDrop<'a>(&'a Arrivals);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    /// Asserts that reserving `bytes` waits (`why`: what it would mean if not) until
    /// `given_back` bytes are released, and then goes through.
    fn assert_waits_for_room(arrivals: &Arrivals, bytes: u64, given_back: u64, why: &str) {
        let reserved = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                assert!(arrivals.reserve(bytes));
                reserved.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(!reserved.load(Ordering::SeqCst), "{why}");
            arrivals.release(given_back);
        });
        assert!(reserved.load(Ordering::SeqCst));
    }

    /// Asserts that reserving `bytes` goes through at once (`why`: what it shows); a
    /// reservation still waiting after 50 ms is ended by stopping the read.
    fn assert_room_for(arrivals: &Arrivals, bytes: u64, why: &str) {
        let reserved = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                if arrivals.reserve(bytes) {
                    reserved.store(true, Ordering::SeqCst);
                }
            });
            std::thread::sleep(Duration::from_millis(50));
            if !reserved.load(Ordering::SeqCst) {
                arrivals.stop();
            }
        });
        assert!(reserved.load(Ordering::SeqCst), "{why}");
    }

    #[test]
    fn a_reservation_waits_for_bytes_given_back() {
        let arrivals = Arrivals::new(10);
        assert!(arrivals.reserve(6));
        assert!(arrivals.reserve(4));
        assert_waits_for_room(&arrivals, 5, 6, "reserved beyond the budget");
        // With nothing reserved, one reservation larger than the budget goes through.
        arrivals.release(9);
        assert!(arrivals.reserve(25));
    }

    #[test]
    fn parts_are_taken_in_the_order_they_arrive() {
        let arrivals = Arrivals::new(10);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                arrivals.arrive(7, Prefetched::Missing, 0);
                arrivals.arrive(3, Prefetched::Bytes(vec![1, 2]), 2);
            });
            assert!(matches!(arrivals.take(), Some((7, Prefetched::Missing, 0))));
            assert!(matches!(arrivals.take(), Some((3, Prefetched::Bytes(b), 2)) if b == [1, 2]));
        });
        // Stopped without an error: nothing more is taken, and nothing failed.
        arrivals.stop();
        arrivals.arrive(1, Prefetched::Missing, 0);
        assert!(arrivals.take().is_none());
        assert!(arrivals.failure().is_ok());
    }

    #[test]
    fn an_arrival_counts_at_the_bytes_it_holds() {
        let arrivals = Arrivals::new(10);
        // Part 0 reserves 4; parts 1 and 2 reserve 3 each.
        assert!(arrivals.reserve(4));
        assert!(arrivals.reserve(6));
        // Reserved at 4, it holds 2: 2 are given back (8 reserved).
        arrivals.arrive(0, Prefetched::Bytes(vec![1, 2]), 4);
        // Not read yet: the reservation stays.
        arrivals.arrive(1, Prefetched::Later, 3);
        assert!(matches!(arrivals.take(), Some((0, _, 2))));
        assert!(matches!(arrivals.take(), Some((1, _, 3))));
        assert_room_for(&arrivals, 1, "the bytes not held were not given back");
        // Reserved at 3, it holds 5: 2 more are counted (11 reserved).
        arrivals.arrive(2, Prefetched::Bytes(vec![0; 5]), 3);
        assert!(matches!(arrivals.take(), Some((2, _, 5))));
        assert_waits_for_room(
            &arrivals,
            1,
            2,
            "the bytes held beyond the reservation were not counted",
        );
    }

    #[test]
    fn a_failure_wakes_every_waiting_thread_and_keeps_the_first_error() {
        let arrivals = Arrivals::new(1);
        assert!(arrivals.reserve(1));
        std::thread::scope(|scope| {
            let taker = scope.spawn(|| arrivals.take().is_none());
            let fetcher = scope.spawn(|| arrivals.reserve(1));
            std::thread::sleep(Duration::from_millis(20));
            arrivals.fail(Error::Io("first".into()));
            arrivals.fail(Error::Io("second".into()));
            assert!(taker.join().unwrap());
            assert!(!fetcher.join().unwrap());
        });
        assert!(matches!(arrivals.failure(), Err(Error::Io(m)) if m == "first"));
    }
}
