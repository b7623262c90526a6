//! The CPU timeline's rows as columns: a CPU's stretches as plain numbers, their texts (comm,
//! workload, waiting) as keys into the run's texts, made into the table's batch only where the
//! batch is encoded (in rayon's pool, see [`schedlab_tables::BackgroundWriter::send_with`]).
//!
//! A timeline has about as many rows as its run has slices. Held as rows (`CpuTimelineRow`),
//! each would carry six shared strings, go through serde_arrow field by field and have its texts
//! hashed again by the dictionary encoder; that cost more than every figure of the aggregate
//! stage together. Held as columns, the numbers move into Arrow arrays as they are and each text
//! is named by the key the slices already gave it.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array};
use arrow_schema::{ArrowError, SchemaRef};
use schedlab_tables::{KeyedText, NULL_KEY, TableBatch, TableColumn};

use crate::slices::NO_TEXT;

/// What a CPU did through a stretch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Idle,
    /// A thread of a pipeline workload ran.
    Workload,
    /// Any other task ran.
    Other,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Workload => "workload",
            State::Other => "other",
        }
    }
}

/// The texts of one run that its stretches are keyed into, shared by all its chunks.
#[derive(Debug)]
pub struct RunTexts {
    /// The run's place among the runs of the file: its keys are apart from another run's,
    /// whose texts are numbered differently (a key names one text throughout a file).
    pub index: u32,
    pub run_id: Arc<str>,
    /// The run's slice texts: the comm and workload keys index them.
    pub texts: Vec<Arc<str>>,
    /// The workloads that mark idle stretches: the waiting keys index them.
    pub waiting: Vec<Arc<str>>,
}

impl RunTexts {
    /// Key `text` of this run in the file's key space.
    fn key(&self, text: u32) -> u128 {
        match text {
            NO_TEXT => NULL_KEY,
            text => (u128::from(self.index) << 32) | u128::from(text),
        }
    }
}

/// One stretch of a CPU: consecutive slices of one state, priority and (for a workload) thread,
/// or a part of an idle one (see [`crate::timeline::Timeline::write_rows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stretch {
    pub start_ns: i64,
    pub end_ns: i64,
    pub state: State,
    /// Key of the workload's text, [`NO_TEXT`] for none.
    pub workload: u32,
    /// The thread that ran; none when idle, or when several other tasks ran one after another.
    pub tid: Option<i32>,
    /// Key of the thread's comm, [`NO_TEXT`] without a thread.
    pub comm: u32,
    pub prio: Option<i32>,
    pub slices: i64,
    /// Key among [`RunTexts::waiting`], [`NO_TEXT`] for none.
    pub waiting: u32,
}

/// Consecutive stretches of one CPU, column by column: a chunk of the `cpu_timeline` table.
#[derive(Debug)]
pub struct Stretches {
    run: Arc<RunTexts>,
    cpu: i32,
    class: Arc<str>,
    start_ns: Vec<i64>,
    end_ns: Vec<i64>,
    state: Vec<State>,
    workload: Vec<u32>,
    tid: Vec<Option<i32>>,
    comm: Vec<u32>,
    prio: Vec<Option<i32>>,
    slices: Vec<i64>,
    waiting: Vec<u32>,
}

impl Stretches {
    /// No stretches yet of `cpu` (of class `class`) in `run`, with room for `capacity`: the
    /// columns of a chunk of tens of thousands of stretches, grown by doubling, would be
    /// copied again and again.
    pub fn new(run: Arc<RunTexts>, cpu: i32, class: Arc<str>, capacity: usize) -> Stretches {
        Stretches {
            run,
            cpu,
            class,
            start_ns: Vec::with_capacity(capacity),
            end_ns: Vec::with_capacity(capacity),
            state: Vec::with_capacity(capacity),
            workload: Vec::with_capacity(capacity),
            tid: Vec::with_capacity(capacity),
            comm: Vec::with_capacity(capacity),
            prio: Vec::with_capacity(capacity),
            slices: Vec::with_capacity(capacity),
            waiting: Vec::with_capacity(capacity),
        }
    }

    /// The same CPU with no stretches yet, and room for `capacity`.
    pub fn emptied(&self, capacity: usize) -> Stretches {
        Stretches::new(self.run.clone(), self.cpu, self.class.clone(), capacity)
    }

    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn push(&mut self, s: Stretch) {
        self.start_ns.push(s.start_ns);
        self.end_ns.push(s.end_ns);
        self.state.push(s.state);
        self.workload.push(s.workload);
        self.tid.push(s.tid);
        self.comm.push(s.comm);
        self.prio.push(s.prio);
        self.slices.push(s.slices);
        self.waiting.push(s.waiting);
    }

    /// The chunk as a batch of the `cpu_timeline` table (`schema`, the order of
    /// `CpuTimelineRow`'s fields).
    pub fn table_batch(self, schema: SchemaRef) -> Result<TableBatch, ArrowError> {
        let rows = self.len();
        let run = self.run;
        let index = u128::from(run.index) << 32;
        let run_id = {
            let run_id = run.run_id.clone();
            keyed(vec![index; rows], move |_| run_id.to_string())
        };
        // A CPU's class is the same all through its run.
        let class = {
            let class = self.class.clone();
            let key = index | u128::from(self.cpu as u32);
            keyed(vec![key; rows], move |_| class.to_string())
        };
        let state = keyed((self.state.iter()).map(|&s| s as u128).collect(), |key| {
            STATES[key as usize].name().to_owned()
        });
        let texts = |keys: &[u32]| -> TableColumn {
            let run = run.clone();
            keyed(keys.iter().map(|&k| run.key(k)).collect(), move |key| {
                run.texts[key as u32 as usize].to_string()
            })
        };
        let waiting = {
            let run = run.clone();
            let keys = (self.waiting.iter()).map(|&k| run.key(k)).collect();
            keyed(keys, move |key| {
                run.waiting[key as u32 as usize].to_string()
            })
        };
        let columns = vec![
            run_id,
            array(Int32Array::from(vec![self.cpu; rows])),
            class,
            array(Int64Array::from(self.start_ns)),
            array(Int64Array::from(self.end_ns)),
            state,
            texts(&self.workload),
            array(Int32Array::from(self.tid)),
            texts(&self.comm),
            array(Int32Array::from(self.prio)),
            array(Int64Array::from(self.slices)),
            waiting,
        ];
        TableBatch::new(&schema, rows, columns)
    }

    /// The stretches as rows, for tests that compare them.
    #[cfg(test)]
    pub fn rows(&self) -> Vec<schedlab_tables::CpuTimelineRow> {
        let text =
            |key: u32, texts: &[Arc<str>]| (key != NO_TEXT).then(|| texts[key as usize].clone());
        (0..self.len())
            .map(|i| schedlab_tables::CpuTimelineRow {
                run_id: self.run.run_id.clone(),
                cpu: self.cpu,
                class: self.class.clone(),
                start_ns: self.start_ns[i],
                end_ns: self.end_ns[i],
                state: Arc::from(self.state[i].name()),
                workload: text(self.workload[i], &self.run.texts),
                tid: self.tid[i],
                comm: text(self.comm[i], &self.run.texts),
                prio: self.prio[i],
                slices: self.slices[i],
                waiting: text(self.waiting[i], &self.run.waiting),
            })
            .collect()
    }
}

/// The states by their number (`State as u128`, their keys).
const STATES: [State; 3] = [State::Idle, State::Workload, State::Other];

fn array(values: impl arrow_array::Array + 'static) -> TableColumn {
    TableColumn::Array(Arc::new(values) as ArrayRef)
}

/// Text named by `keys`, made by `text` once per distinct key.
fn keyed(keys: Vec<u128>, text: impl Fn(u128) -> String + Send + Sync + 'static) -> TableColumn {
    TableColumn::Text(KeyedText {
        keys,
        text: Arc::new(text),
    })
}
