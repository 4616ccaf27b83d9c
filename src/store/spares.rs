//! Buffers handed back by the decoders of one read for its next fetches to fill: memory
//! reused while it is warm, rather than freed and asked of the kernel again (every new
//! page costs a fault and zeroing, as much as the copy into it).

use std::sync::{Arc, Mutex};

/// A bounded pool of emptied byte buffers, shared by the fetches and the decoders of one
/// read (clones share it). The default pool keeps nothing.
#[derive(Debug, Clone, Default)]
pub struct Spares(Option<Arc<Mutex<Pool>>>);

#[derive(Debug)]
struct Pool {
    buffers: Vec<Vec<u8>>,
    /// Capacity of `buffers`, in bytes.
    held: usize,
    /// The most capacity kept.
    limit: usize,
}

impl Spares {
    /// A pool keeping buffers of up to `limit` bytes of capacity in all.
    pub fn holding(limit: usize) -> Self {
        Spares(Some(Arc::new(Mutex::new(Pool {
            buffers: Vec::new(),
            held: 0,
            limit,
        }))))
    }

    /// The smallest buffer kept with room for `len` bytes (empty), if any.
    pub fn take(&self, len: usize) -> Option<Vec<u8>> {
        let mut pool = self.0.as_ref()?.lock().ok()?;
        let (at, _) = pool
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())?;
        let buf = pool.buffers.swap_remove(at);
        pool.held -= buf.capacity();
        Some(buf)
    }

    /// An empty buffer with room for `len` bytes: [`Spares::take`]'s, or a new one. A new
    /// one's room is rounded up (to an eighth of a power of two, at most a quarter more) when
    /// there is a pool, so that it serves later reads of about the same size when it comes
    /// back.
    pub fn take_or_new(&self, len: usize, label: &str) -> crate::error::Result<Vec<u8>> {
        if let Some(buf) = self.take(len) {
            return Ok(buf);
        }
        let mut buf = Vec::new();
        let step = match self.0 {
            Some(_) => (len.next_power_of_two() / 8).max(1),
            None => 1,
        };
        let room = len.div_ceil(step).saturating_mul(step);
        crate::error::try_reserve(&mut buf, room, label)?;
        Ok(buf)
    }

    /// Keeps `buf` for a later [`Spares::take`]; when the pool is full the smallest
    /// buffers make way for a larger one, or `buf` is dropped.
    pub fn give(&self, mut buf: Vec<u8>) {
        let Some(Ok(mut pool)) = self.0.as_ref().map(|p| p.lock()) else {
            return;
        };
        let size = buf.capacity();
        if size == 0 || size > pool.limit {
            return;
        }
        while pool.held + size > pool.limit {
            let Some((at, smallest)) = pool
                .buffers
                .iter()
                .enumerate()
                .map(|(at, b)| (at, b.capacity()))
                .min_by_key(|&(_, c)| c)
                .filter(|&(_, c)| c < size)
            else {
                return;
            };
            pool.buffers.swap_remove(at);
            pool.held -= smallest;
        }
        buf.clear();
        pool.held += size;
        pool.buffers.push(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_fitting_buffer_is_taken_and_the_limit_holds() {
        let spares = Spares::holding(100);
        spares.give(Vec::with_capacity(40));
        spares.give(vec![7u8; 30]);
        // No room for a 50: the 30 makes way (the 40 and the 50 fit).
        spares.give(Vec::with_capacity(50));
        let taken = spares.take(35).expect("the 40");
        assert!(taken.is_empty() && taken.capacity() == 40);
        assert!(spares.take(60).is_none());
        assert_eq!(spares.take(31).map(|b| b.capacity()), Some(50));
        assert!(spares.take(1).is_none());
        // Larger than the whole limit: not kept.
        spares.give(Vec::with_capacity(101));
        assert!(spares.take(101).is_none());
        // New buffers have room for others of about their size.
        assert_eq!(spares.take_or_new(1000, "x").unwrap().capacity(), 1024);
        assert_eq!(spares.take_or_new(1025, "x").unwrap().capacity(), 1280);
        // The default pool keeps nothing, and rounds nothing up.
        let none = Spares::default();
        assert_eq!(none.take_or_new(1025, "x").unwrap().capacity(), 1025);
        none.give(Vec::with_capacity(10));
        assert!(none.take(1).is_none());
    }
}
