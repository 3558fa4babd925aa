//! The small bounded queue between a topic's reader and each of its writers.
//!
//! Pushing never blocks: when the queue is full the oldest sample is dropped, because for
//! sensor streams the newest sample is the one worth sending, and because the reader must never
//! wait for a writer (a blocked reader would pass the backpressure on to the publisher, the
//! coupling the bridge exists to break). Each writer thread pops from its own queue.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::Nanos;

/// A sample waiting for its writer, with the time (bridge clock) it arrived.
#[derive(Debug, Clone)]
pub struct Queued<T> {
    /// The sample.
    pub item: T,
    /// When the reader took it.
    pub received: Nanos,
}

#[derive(Debug)]
struct Inner<T> {
    items: VecDeque<Queued<T>>,
    closed: bool,
    dropped: u64,
}

/// A bounded drop-oldest queue for one writer.
#[derive(Debug)]
pub struct DropOldest<T> {
    capacity: usize,
    inner: Mutex<Inner<T>>,
    ready: Condvar,
}

impl<T> DropOldest<T> {
    /// An empty queue of `capacity` (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner { items: VecDeque::new(), closed: false, dropped: 0 }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        // A panicking writer thread must not take the reader down with it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a sample; returns true when the oldest one was dropped to make room.
    pub fn push(&self, item: T, received: Nanos) -> bool {
        let mut q = self.lock();
        let dropped = q.items.len() >= self.capacity;
        if dropped {
            q.items.pop_front();
            q.dropped += 1;
        }
        q.items.push_back(Queued { item, received });
        drop(q);
        self.ready.notify_one();
        dropped
    }

    /// The oldest sample, waiting up to `timeout` for one; `None` on timeout or once closed.
    pub fn pop(&self, timeout: Duration) -> Option<Queued<T>> {
        let q = self.lock();
        let (mut q, _) = self
            .ready
            .wait_timeout_while(q, timeout, |q| q.items.is_empty() && !q.closed)
            .unwrap_or_else(|e| e.into_inner());
        if q.closed { None } else { q.items.pop_front() }
    }

    /// Waits up to `timeout` for an item without taking it; true if one is there (false once
    /// closed). The critical writer waits here, then takes the writer before popping, so
    /// that the reader, which writes directly only while holding the writer with nothing
    /// queued, never overtakes a popped sample.
    pub fn wait_nonempty(&self, timeout: Duration) -> bool {
        let q = self.lock();
        let (q, _) = self
            .ready
            .wait_timeout_while(q, timeout, |q| q.items.is_empty() && !q.closed)
            .unwrap_or_else(|e| e.into_inner());
        !q.closed && !q.items.is_empty()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }

    /// Drops everything waiting; returns how many.
    pub fn clear(&self) -> usize {
        let mut q = self.lock();
        let n = q.items.len();
        q.items.clear();
        q.dropped += n as u64;
        n
    }

    /// Wakes the writer for good: every later `pop` returns `None`.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// Whether the queue is full (the next push drops).
    pub fn is_full(&self) -> bool {
        self.lock().items.len() >= self.capacity
    }

    /// How full, 0–1.
    pub fn fill(&self) -> f64 {
        self.lock().items.len() as f64 / self.capacity as f64
    }

    /// How long the oldest waiting sample has waited at `now` (0 when empty).
    pub fn oldest_wait(&self, now: Nanos) -> Nanos {
        self.lock().items.front().map_or(0, |q| now.saturating_sub(q.received))
    }

    /// Samples dropped so far (overflow and `clear`).
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_drops_the_oldest_and_keeps_order() {
        let q = DropOldest::new(3);
        for i in 0..5 {
            let dropped = q.push(i, i as Nanos);
            assert_eq!(dropped, i >= 3);
        }
        assert_eq!(q.dropped(), 2);
        assert!(q.is_full());
        assert_eq!(q.oldest_wait(10), 8);
        let got: Vec<_> = std::iter::from_fn(|| q.pop(Duration::ZERO)).map(|x| x.item).collect();
        assert_eq!(got, [2, 3, 4]);
        assert_eq!(q.fill(), 0.0);
    }

    #[test]
    fn close_wakes_a_waiting_writer() {
        let q = std::sync::Arc::new(DropOldest::<u32>::new(2));
        let waiter = {
            let q = q.clone();
            std::thread::spawn(move || q.pop(Duration::from_secs(60)))
        };
        std::thread::sleep(Duration::from_millis(20));
        q.close();
        assert!(waiter.join().unwrap().is_none());
    }

    #[test]
    fn clear_counts_as_dropped() {
        let q = DropOldest::new(4);
        q.push(1, 0);
        q.push(2, 0);
        assert_eq!(q.clear(), 2);
        assert_eq!(q.dropped(), 2);
        assert!(q.pop(Duration::ZERO).is_none());
    }
}
