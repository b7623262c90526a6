//! What each CPU was doing when: the CPU state timeline behind the "why here" figures.
//!
//! `sched_slices` already tile each CPU's time: a CPU's slices are consecutive, each ending at
//! a switch, and the idle task's slices (tid 0) are its idle time. So the timeline is the slices
//! per CPU in time order, asked "what ran on CPU c between a and b". Time a CPU's trace does not
//! cover is in no slice and so counts as neither idle nor busy: on a CPU whose idle-context
//! events are lost (the quality table's "went idle … never shows it leaving idle") idle time is
//! folded into the next task's slice, and the idle figures there are too low, never too high.

use std::ops::Range;
use std::sync::Arc;

use crate::RunTables;
use crate::cpu_numbers::CpuNumbers;
use crate::placement_cost::IdleWhileWaiting;
use crate::slices::{NO_TEXT, Slice, Slices, rows_by_group};
use crate::stretches::{RunTexts, State, Stretch, Stretches};

/// Rows [`Timeline::write_rows`] hands on at once.
pub const ROWS_PER_WRITE: usize = 64 * 1024;

/// One run's slices per CPU in time order: per CPU, the rows of its slices in its store.
#[derive(Debug)]
pub struct Timeline<'a> {
    of: &'a Slices,
    /// Every CPU's rows, CPU after CPU.
    rows: Vec<u32>,
    /// Every CPU of the slices; a CPU's place is its index here.
    cpus: CpuNumbers,
    /// By place, where the CPU's rows lie in `rows` (empty for a CPU whose slices all have no
    /// length).
    ranges: Vec<Range<usize>>,
}

impl<'a> Timeline<'a> {
    /// The timeline of `slices` (all of a run's slices, idle and other tasks' included), its
    /// slices of no length left out (see [`rows_by_group`]).
    pub fn new(slices: &'a Slices) -> Timeline<'a> {
        let cpus = CpuNumbers::of(slices.iter().map(|s| s.cpu()));
        let (rows, ends) = rows_by_group(slices, cpus.cpus().len(), |s| {
            (s.end_ns() > s.start_ns()).then(|| cpus.find(s.cpu()).expect("one of the CPUs"))
        });
        let starts = std::iter::once(0).chain(ends.iter().copied());
        let ranges = (starts.zip(&ends))
            .map(|(start, &end)| start as usize..end as usize)
            .collect();
        Timeline {
            of: slices,
            rows,
            cpus,
            ranges,
        }
    }

    /// The rows of the slices of the CPU at `place` in `cpus`, in time order.
    fn rows_at(&self, place: usize) -> &[u32] {
        &self.rows[self.ranges[place].clone()]
    }

    /// A cursor for queries of this timeline.
    pub fn cursor(&self) -> Cursor<'_, 'a> {
        Cursor {
            timeline: self,
            hints: vec![0; self.ranges.len()],
        }
    }

    /// The timeline as stretches, handed to `write` a CPU's at a time, in chunks of at most
    /// [`ROWS_PER_WRITE`] (a run's stretches are about as many as its slices): consecutive
    /// slices of one state, priority and (for a workload) thread merged into one stretch; idle
    /// stretches cut where `waiting` marks begin and end. `index` is the run's place among the
    /// runs written to one file (see [`RunTexts::index`]).
    pub fn write_rows<E>(
        &self,
        run: &RunTables<'_>,
        index: u32,
        waiting: &IdleWhileWaiting<'_>,
        mut write: impl FnMut(Stretches) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut names: Vec<&str> = waiting.values().flatten().map(|&(_, w)| w).collect();
        names.sort_unstable();
        names.dedup();
        let texts = Arc::new(RunTexts {
            index,
            run_id: Arc::from(run.run_id),
            texts: self.of.texts().to_vec(),
            waiting: names.iter().map(|&w| Arc::from(w)).collect(),
        });
        for (place, &cpu) in self.cpus.cpus().iter().enumerate() {
            let on_cpu = self.rows_at(place);
            if on_cpu.is_empty() {
                continue;
            }
            let marks: Vec<((i64, i64), u32)> =
                merged_marks(waiting.get(&cpu).map_or(&[][..], Vec::as_slice))
                    .into_iter()
                    .map(|(span, name)| {
                        let key = names.binary_search(&name).expect("a name of the marks");
                        (span, key as u32)
                    })
                    .collect();
            // About a stretch a slice, more where marks cut idle ones.
            let room = on_cpu.len().min(ROWS_PER_WRITE);
            let class = Arc::from(run.class_name(cpu));
            let mut out = Stretches::new(texts.clone(), cpu, class, room);
            // A finished stretch: idle ones cut at the marks, and a full chunk handed on.
            let mut push = |out: &mut Stretches, stretch: Stretch| {
                match stretch.state {
                    State::Idle => cut_at_marks(stretch, &marks, |part| out.push(part)),
                    _ => out.push(stretch),
                }
                if out.len() >= ROWS_PER_WRITE {
                    let full = std::mem::replace(out, out.emptied(room));
                    write(full)?;
                }
                Ok(())
            };
            let mut current: Option<Stretch> = None;
            for s in on_cpu.iter().map(|&row| self.of.get(row as usize)) {
                let state = match (s.is_idle(), s.workload_key() != NO_TEXT) {
                    (true, _) => State::Idle,
                    (false, true) => State::Workload,
                    (false, false) => State::Other,
                };
                let prio = if s.is_idle() { None } else { s.prio() };
                let tid = (!s.is_idle()).then_some(s.tid());
                if let Some(stretch) = current.as_mut()
                    && stretch.end_ns == s.start_ns()
                    && stretch.state == state
                    && stretch.prio == prio
                    && (state != State::Workload || stretch.tid == tid)
                {
                    stretch.end_ns = s.end_ns();
                    stretch.slices += 1;
                    if stretch.tid != tid {
                        stretch.tid = None;
                        stretch.comm = NO_TEXT;
                    }
                    continue;
                }
                if let Some(stretch) = current.take() {
                    push(&mut out, stretch)?;
                }
                current = Some(Stretch {
                    start_ns: s.start_ns(),
                    end_ns: s.end_ns(),
                    state,
                    workload: s.workload_key(),
                    tid,
                    comm: if tid.is_some() { s.comm_key() } else { NO_TEXT },
                    prio,
                    slices: 1,
                    waiting: NO_TEXT,
                });
            }
            if let Some(stretch) = current {
                push(&mut out, stretch)?;
            }
            if !out.is_empty() {
                write(out)?;
            }
        }
        Ok(())
    }
}

/// Queries of a [`Timeline`] that move mostly forward in time, as a thread's slices do: each
/// CPU's search starts where its last answer was and gallops from there, so that a query near
/// the last one reads a few neighbouring ends instead of binary-searching the CPU's whole
/// column (whose cache misses were most of the "why here" figures' time). Any order of
/// queries gets the same answers; only their cost depends on it.
pub struct Cursor<'t, 'a> {
    timeline: &'t Timeline<'a>,
    /// Per CPU (by its place in the timeline's CPUs), the position of the last answer in its
    /// slices.
    hints: Vec<usize>,
}

impl<'t, 'a> Cursor<'t, 'a> {
    /// The slices of `cpu` that overlap `[start, end)`, each with the overlapping part.
    pub fn during(
        &mut self,
        cpu: i32,
        (start, end): (i64, i64),
    ) -> impl Iterator<Item = (Slice<'a>, (i64, i64))> + use<'t, 'a> {
        let of = self.timeline.of;
        let (rows, first) = match self.timeline.cpus.find(cpu) {
            Some(place) => {
                let rows = self.timeline.rows_at(place);
                let end_of = |row: u32| of.get(row as usize).end_ns();
                self.hints[place] = first_ending_after(rows, end_of, start, self.hints[place]);
                (rows, self.hints[place])
            }
            None => (&[][..], 0),
        };
        (rows[first..].iter())
            .map(move |&row| of.get(row as usize))
            .take_while(move |s| s.start_ns() < end)
            .map(move |s| (s, (s.start_ns().max(start), s.end_ns().min(end))))
    }

    /// The slice running on `cpu` at `time`.
    pub fn at(&mut self, cpu: i32, time: i64) -> Option<Slice<'a>> {
        self.during(cpu, (time, time + 1)).next().map(|(s, _)| s)
    }
}

/// The first position in `rows` (in time order, so their ends ascend) whose end is after `time`:
/// `rows.partition_point(|r| end_of(r) <= time)`, found by galloping from `hint` towards it.
fn first_ending_after(rows: &[u32], end_of: impl Fn(u32) -> i64, time: i64, hint: usize) -> usize {
    let ended = |i: usize| end_of(rows[i]) <= time;
    let search =
        |from: usize, to: usize| from + rows[from..to].partition_point(|&r| end_of(r) <= time);
    let hint = hint.min(rows.len());
    if hint > 0 && !ended(hint - 1) {
        // Behind the hint: the answer is at most `below`.
        let (mut below, mut step) = (hint - 1, 1);
        loop {
            if below < step {
                return search(0, below);
            }
            let probe = below - step;
            if ended(probe) {
                return search(probe + 1, below);
            }
            (below, step) = (probe, step * 2);
        }
    }
    // At or past the hint: the answer is at least `from`.
    let (mut from, mut step) = (hint, 1);
    loop {
        let probe = from + step - 1;
        if probe >= rows.len() {
            return search(from, rows.len());
        }
        if !ended(probe) {
            return search(from, probe);
        }
        (from, step) = (probe + 1, step * 2);
    }
}

/// Marks in time order with overlapping ones merged (the first one's workload names the whole).
fn merged_marks<'a>(marks: &[((i64, i64), &'a str)]) -> Vec<((i64, i64), &'a str)> {
    let mut sorted = marks.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<((i64, i64), &str)> = Vec::new();
    for (span, workload) in sorted {
        match out.last_mut() {
            Some(((_, end), _)) if span.0 <= *end => *end = (*end).max(span.1),
            _ => out.push((span, workload)),
        }
    }
    out
}

/// An idle stretch cut into parts with and without a mark (`push`ed in order); the first part
/// keeps its count of slices, the others count 0.
fn cut_at_marks(stretch: Stretch, marks: &[((i64, i64), u32)], mut push: impl FnMut(Stretch)) {
    let mut first = true;
    let mut part = |start: i64, end: i64, waiting: u32| {
        if end > start {
            push(Stretch {
                start_ns: start,
                end_ns: end,
                waiting,
                slices: if first { stretch.slices } else { 0 },
                ..stretch
            });
            first = false;
        }
    };
    let mut cursor = stretch.start_ns;
    let from = marks.partition_point(|((_, end), _)| *end <= stretch.start_ns);
    for &((start, end), workload) in marks[from..].iter().take_while(|m| m.0.0 < stretch.end_ns) {
        let (start, end) = (start.max(cursor), end.min(stretch.end_ns));
        part(cursor, start, NO_TEXT);
        part(start, end, workload);
        cursor = end;
    }
    part(cursor, stretch.end_ns, NO_TEXT);
}

/// The length of the union of `spans`, and nothing counted twice.
pub fn union_ns(mut spans: Vec<(i64, i64)>) -> i64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut reach = i64::MIN;
    for (start, end) in spans {
        let start = start.max(reach);
        if end > start {
            total += end - start;
            reach = end;
        }
    }
    total
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use schedlab_tables::{CpuTimelineRow, SchedSliceRow};

    use super::*;

    pub(crate) fn slice(
        cpu: i32,
        tid: i32,
        (start_ns, end_ns): (i64, i64),
        prio: i32,
        workload: Option<&str>,
    ) -> SchedSliceRow {
        SchedSliceRow {
            run_id: "r".into(),
            cpu,
            pid: tid,
            tid,
            comm: if tid == 0 { "swapper" } else { "task" }.into(),
            start_ns,
            end_ns,
            run_ns: end_ns - start_ns,
            wait_ns: 0,
            sched_delay_ns: 0,
            preempt_wait_ns: 0,
            prev_state: "S".into(),
            workload: workload.map(Arc::from),
            prio: (tid != 0).then_some(prio),
        }
    }

    /// Every row [`Timeline::write_rows`] writes, in order.
    fn rows(
        timeline: &Timeline<'_>,
        run: &RunTables<'_>,
        waiting: &IdleWhileWaiting<'_>,
    ) -> Vec<CpuTimelineRow> {
        let mut all = Vec::new();
        let written: Result<(), ()> = timeline.write_rows(run, 0, waiting, |stretches| {
            all.extend(stretches.rows());
            Ok(())
        });
        written.unwrap();
        all
    }

    #[test]
    fn rows_are_written_in_chunks_of_one_cpu_each() {
        // Alternating idle and another task on two CPUs: no two slices merge.
        let per_cpu = ROWS_PER_WRITE + 10;
        let slices: Vec<SchedSliceRow> = (0..2)
            .flat_map(|cpu| {
                (0..per_cpu as i64).map(move |i| {
                    let tid = if i % 2 == 0 { 0 } else { 7 };
                    slice(cpu, tid, (i * 10, i * 10 + 10), 120, None)
                })
            })
            .collect();
        let refs = Slices::from_rows(&slices);
        let run = RunTables::for_tests(&[]);
        let mut chunks: Vec<(i32, i32, usize)> = Vec::new();
        let written: Result<(), ()> =
            Timeline::new(&refs).write_rows(&run, 0, &IdleWhileWaiting::new(), |stretches| {
                let rows = stretches.rows();
                let (first, last) = (rows[0].cpu, rows[rows.len() - 1].cpu);
                chunks.push((first, last, rows.len()));
                Ok(())
            });
        written.unwrap();
        assert_eq!(
            chunks,
            [
                (0, 0, ROWS_PER_WRITE),
                (0, 0, 10),
                (1, 1, ROWS_PER_WRITE),
                (1, 1, 10)
            ]
        );
        // A write that fails stops the timeline there.
        let mut calls = 0;
        let failed = Timeline::new(&refs).write_rows(&run, 0, &IdleWhileWaiting::new(), |_| {
            calls += 1;
            Err("disk full")
        });
        assert_eq!((failed, calls), (Err("disk full"), 1));
    }

    #[test]
    fn idle_stretches_are_cut_where_a_workload_waited() {
        let slices = [
            slice(0, 0, (0, 100), 0, None),
            slice(0, 5, (100, 110), 120, None),
        ];
        let refs = Slices::from_rows(&slices);
        let marks =
            IdleWhileWaiting::from([(0, vec![((20, 40), "w"), ((30, 50), "v"), ((90, 120), "w")])]);
        let run = RunTables::for_tests(&[]);
        let rows: Vec<(i64, i64, Option<String>, i64)> = rows(&Timeline::new(&refs), &run, &marks)
            .into_iter()
            .map(|r| {
                (
                    r.start_ns,
                    r.end_ns,
                    r.waiting.map(|w| w.to_string()),
                    r.slices,
                )
            })
            .collect();
        let w = || Some("w".to_owned());
        assert_eq!(
            rows,
            [
                (0, 20, None, 1),
                (20, 50, w(), 0),
                (50, 90, None, 0),
                (90, 100, w(), 0),
                (100, 110, None, 1)
            ]
        );
    }

    proptest::proptest! {
        /// Whatever the hint, the gallop finds what a binary search of the whole column finds.
        #[test]
        fn a_search_from_any_hint_finds_the_first_end_after_the_time(
            mut ends in proptest::collection::vec(0i64..1000, 0..200),
            time in -5i64..1005,
            hint in 0usize..250,
        ) {
            ends.sort_unstable();
            let expected = ends.partition_point(|&e| e <= time);
            let rows: Vec<u32> = (0..ends.len() as u32).collect();
            let found = first_ending_after(&rows, |row| ends[row as usize], time, hint);
            proptest::prop_assert_eq!(found, expected);
        }
    }

    #[test]
    fn a_cursor_answers_queries_in_any_order_as_a_scan_does() {
        // Two CPUs of back-to-back slices, 0..10, 10..20, ...; queries back and forth in time.
        let slices: Vec<SchedSliceRow> = (0..2)
            .flat_map(|cpu| {
                (0..50).map(move |i: i32| {
                    let t = i64::from(i) * 10;
                    slice(cpu, i + 1, (t, t + 10), 120, None)
                })
            })
            .collect();
        let refs = Slices::from_rows(&slices);
        let timeline = Timeline::new(&refs);
        let mut cursor = timeline.cursor();
        for (cpu, span) in [
            (0, (455, 478)),
            (1, (3, 31)),
            (0, (12, 13)),
            (0, (480, 600)),
            (1, (499, 500)),
        ] {
            let got: Vec<(i32, (i64, i64))> = cursor
                .during(cpu, span)
                .map(|(s, part)| (s.tid(), part))
                .collect();
            let scanned: Vec<(i32, (i64, i64))> = (slices.iter())
                .filter(|s| s.cpu == cpu && s.end_ns > span.0 && s.start_ns < span.1)
                .map(|s| (s.tid, (s.start_ns.max(span.0), s.end_ns.min(span.1))))
                .collect();
            assert_eq!(got, scanned, "cpu {cpu} {span:?}");
        }
    }

    #[test]
    fn cpus_numbered_oddly_are_found_as_cpus_numbered_from_0_are() {
        let cpus = [3, -1, 70_000, 0];
        let slices: Vec<SchedSliceRow> = (cpus.iter())
            .map(|&cpu| slice(cpu, cpu.rem_euclid(100) + 1, (0, 10), 120, None))
            .chain([slice(5, 9, (20, 20), 120, None)])
            .collect();
        let refs = Slices::from_rows(&slices);
        let timeline = Timeline::new(&refs);
        let mut cursor = timeline.cursor();
        for cpu in cpus {
            let tids: Vec<i32> = cursor.during(cpu, (0, 100)).map(|(s, _)| s.tid()).collect();
            assert_eq!(tids, [cpu.rem_euclid(100) + 1], "cpu {cpu}");
        }
        for cpu in [1, 2, 5, -2, 69_999, 1 << 20] {
            assert_eq!(cursor.at(cpu, 5).map(|s| s.tid()), None, "cpu {cpu}");
        }
        let run = RunTables::for_tests(&[]);
        let written: Vec<i32> = (rows(&timeline, &run, &IdleWhileWaiting::new()).iter())
            .map(|r| r.cpu)
            .collect();
        assert_eq!(
            written,
            [-1, 0, 3, 70_000],
            "a CPU of only empty slices has none"
        );
    }

    #[test]
    fn a_union_counts_overlaps_once() {
        assert_eq!(union_ns(vec![(0, 10), (5, 15), (20, 30), (22, 25)]), 25);
        assert_eq!(union_ns(vec![]), 0);
    }

    #[test]
    fn stretches_merge_like_slices_and_queries_cut_at_the_edges() {
        let slices = [
            slice(0, 0, (0, 10), 120, None),
            slice(0, 0, (10, 20), 120, None),
            slice(0, 7, (20, 30), 139, None),
            slice(0, 8, (30, 40), 139, None),
            slice(0, 9, (40, 50), 120, Some("w")),
            slice(0, 9, (50, 60), 120, Some("w")),
            slice(0, 10, (60, 70), 120, Some("w")),
        ];
        let refs = Slices::from_rows(&slices);
        let timeline = Timeline::new(&refs);
        let run = RunTables::for_tests(&[]);
        let rows: Vec<(i64, i64, &str, Option<i32>, i64)> =
            (rows(&timeline, &run, &IdleWhileWaiting::new()).into_iter())
                .map(|r| {
                    let state = match &*r.state {
                        "idle" => "idle",
                        "other" => "other",
                        _ => "workload",
                    };
                    (r.start_ns, r.end_ns, state, r.tid, r.slices)
                })
                .collect();
        assert_eq!(
            rows,
            [
                (0, 20, "idle", None, 2),
                (20, 40, "other", None, 2),
                (40, 60, "workload", Some(9), 2),
                (60, 70, "workload", Some(10), 1),
            ]
        );
        let mut cursor = timeline.cursor();
        let parts: Vec<(i32, (i64, i64))> = (cursor.during(0, (15, 35)))
            .map(|(s, part)| (s.tid(), part))
            .collect();
        assert_eq!(parts, [(0, (15, 20)), (7, (20, 30)), (8, (30, 35))]);
        assert_eq!(cursor.at(0, 30).map(|s| s.tid()), Some(8));
        assert_eq!(
            cursor.at(0, 70).map(|s| s.tid()),
            None,
            "after the trace: unknown"
        );
        assert_eq!(
            cursor.at(1, 5).map(|s| s.tid()),
            None,
            "a CPU without slices"
        );
    }
}
