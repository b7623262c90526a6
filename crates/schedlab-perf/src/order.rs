//! perf's event ordering: the two-round rule of `util/ordered-events.c`.
//!
//! Records with a timestamp are queued. When a FINISHED_ROUND arrives, every queued record
//! with a timestamp up to the largest timestamp seen *at the previous* FINISHED_ROUND is
//! delivered in time order; equal timestamps keep file order. Records without a timestamp are
//! delivered as soon as they are read. At the end of the file the rest is delivered.
//!
//! Rounds arrive in chunks (see `framing`): a chunk's events are queued, and the flush happens
//! when the round's last chunk arrives. Because each CPU's records arrive in time order within a
//! round, the queue after adding a round is a handful of sorted runs; the standard stable sort
//! detects and merges runs, so this costs a per-CPU merge rather than a full sort. Keys are
//! queued in file order, so the stable sort keeps equal timestamps in file order.

use std::collections::VecDeque;

use crate::decode::Event;

/// Where a queued event is: its time, and its place among the chunks the orderer holds.
///
/// The queue sorts these 16-byte keys rather than the events (72 bytes each), which stay in
/// their chunk's vector: sorting and queueing moved every event twice, which cost more than
/// the state machine's work on it.
#[derive(Clone, Copy)]
struct Key {
    time: u64,
    /// Number of the chunk since the start of the file.
    chunk: u32,
    index: u32,
}

#[derive(Default)]
pub(crate) struct Orderer {
    /// Chunks with events not yet delivered, oldest first, each with the count of its queued
    /// events; `first_chunk` is the number of the front one.
    chunks: VecDeque<(Vec<Event>, usize)>,
    first_chunk: u32,
    pending: Vec<Key>,
    max_time: u64,
    /// Limit of the next flush: the largest timestamp queued before the previous round ended.
    next_flush: u64,
    /// Keys were queued since the queue was last sorted.
    unsorted: bool,
}

impl Orderer {
    /// Queues one chunk's events (in file order); at the last chunk of a round, delivers what
    /// perf would deliver at the FINISHED_ROUND that ends it.
    pub(crate) fn chunk(
        &mut self,
        events: Vec<Event>,
        ends_round: bool,
        deliver: &mut impl FnMut(&Event),
    ) {
        let chunk = self.first_chunk + self.chunks.len() as u32;
        let before = self.pending.len();
        for (index, e) in events.iter().enumerate() {
            if e.time == 0 {
                deliver(e);
            } else {
                self.pending.push(Key {
                    time: e.time,
                    chunk,
                    index: index as u32,
                });
            }
        }
        let queued = self.pending.len() - before;
        self.chunks.push_back((events, queued));
        self.unsorted |= queued > 0;
        if !ends_round {
            return;
        }
        self.sort();
        let n = self.pending.partition_point(|k| k.time <= self.next_flush);
        self.deliver(n, deliver);
        self.next_flush = self.max_time;
    }

    /// Delivers everything still queued (end of file).
    pub(crate) fn finish(&mut self, deliver: &mut impl FnMut(&Event)) {
        // Sorted unless the data ended in the middle of a round.
        self.sort();
        self.deliver(self.pending.len(), deliver);
    }

    /// Sorts the queue if keys were added since it was last sorted: many of perf's rounds are
    /// empty, and even a sorted queue costs a pass to sort.
    fn sort(&mut self) {
        if std::mem::take(&mut self.unsorted) {
            self.pending.sort_by_key(|k| k.time);
            if let Some(last) = self.pending.last() {
                self.max_time = self.max_time.max(last.time);
            }
        }
    }

    /// Delivers the first `n` queued events and lets go of the chunks left with none queued.
    fn deliver(&mut self, n: usize, deliver: &mut impl FnMut(&Event)) {
        for k in self.pending.drain(..n) {
            let (events, queued) = &mut self.chunks[(k.chunk - self.first_chunk) as usize];
            deliver(&events[k.index as usize]);
            *queued -= 1;
        }
        while self.chunks.front().is_some_and(|(_, queued)| *queued == 0) {
            self.chunks.pop_front();
            self.first_chunk += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Body;

    fn ev(time: u64, tag: i32) -> Event {
        Event {
            time,
            cpu: 0,
            pid: tag,
            tid: tag,
            body: Body::ProcessExit { pid: tag },
        }
    }

    /// perf's rule written the plain way: queue everything, stable-sort, deliver up to the
    /// previous round's maximum.
    fn reference(rounds: &[Vec<Event>]) -> Vec<(u64, i32)> {
        let (mut queue, mut got, mut max, mut limit) = (Vec::new(), Vec::new(), 0, 0);
        for round in rounds {
            for e in round {
                if e.time == 0 {
                    got.push((0, e.pid));
                } else {
                    queue.push((e.time, e.pid));
                    max = max.max(e.time);
                }
            }
            queue.sort_by_key(|&(t, _)| t);
            let n = queue.partition_point(|&(t, _)| t <= limit);
            got.extend(queue.drain(..n));
            limit = max;
        }
        got.extend(queue);
        got
    }

    proptest::proptest! {
        /// Rounds made of per-CPU sorted runs, with equal times across runs and timeless
        /// records, handed over in chunks, come out as the plain rule has them.
        #[test]
        fn rounds_come_out_as_perfs_rule_has_them(
            rounds in proptest::collection::vec(
                proptest::collection::vec(proptest::collection::vec(0u64..40, 0..12), 0..12),
                0..6,
            ),
            cuts in proptest::collection::vec(0usize..100, 1..6),
            cut_off: bool,
        ) {
            let mut tag = 0;
            let rounds: Vec<Vec<Event>> = (rounds.iter().enumerate())
                .map(|(r, cpus)| {
                    (cpus.iter())
                        .flat_map(|times| {
                            let mut times = times.clone();
                            times.sort_unstable();
                            times
                        })
                        .map(|t| {
                            tag += 1;
                            // Later rounds tend to later times, as in a recording.
                            ev(if t == 0 { 0 } else { t + 10 * r as u64 }, tag)
                        })
                        .collect()
                })
                .collect();
            let mut o = Orderer::default();
            let mut got = Vec::new();
            for (i, (round, cut)) in rounds.iter().zip(cuts.iter().cycle()).enumerate() {
                // In two chunks, the first of them possibly empty, as the framer may cut it;
                // data cut off in the middle of its last round ends without a round end.
                let cut = cut % (round.len() + 1);
                let ends = !(cut_off && i + 1 == rounds.len());
                let mut d = |e: &Event| got.push((e.time, e.pid));
                o.chunk(round[..cut].to_vec(), false, &mut d);
                o.chunk(round[cut..].to_vec(), ends, &mut d);
            }
            o.finish(&mut |e: &Event| got.push((e.time, e.pid)));
            proptest::prop_assert_eq!(got, reference(&rounds));
        }
    }

    #[test]
    fn delivers_up_to_the_previous_rounds_maximum() {
        let mut o = Orderer::default();
        let mut got = Vec::new();
        let mut d = |e: &Event| got.push((e.time, e.pid));
        o.chunk(vec![ev(10, 1), ev(5, 2), ev(0, 3)], true, &mut d);
        // Round 1: only the timeless record; the limit was 0.
        o.chunk(vec![ev(7, 4)], false, &mut d);
        o.chunk(vec![ev(12, 5), ev(10, 6)], true, &mut d);
        // Round 2: up to 10 (max of round 1), equal times in queue order.
        o.finish(&mut d);
        assert_eq!(got, vec![(0, 3), (5, 2), (7, 4), (10, 1), (10, 6), (12, 5)]);
    }
}
