//! The letters of sched_switch's `prev_state`, read from the tracepoint's own print format.
//!
//! The kernel's task state bits are not stable: Linux 4.14 renumbered them (before, 16 was `Z`
//! and 2048 meant preempted; since, 16 is `X` and 256 means preempted). The kernel prints the
//! field as `__print_flags(prev_state & MASK, "|", { 0x01, "S" }, { 0x02, "D" }, …) : "R"`
//! followed by `prev_state & MAX ? "+" : ""`, and perf copies that format into the file. So the
//! letters come from the `{ bit, "name" }` pairs of the file's own format, and the preemption
//! bit (`TASK_REPORT_MAX` since 4.14, `TASK_STATE_MAX` before) is the next bit above the last
//! named one. A format this does not recognize falls back to the table of 4.14 and later.

/// How one kernel names the bits of `prev_state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStates {
    /// Each named bit with its letter, in the order the kernel prints them.
    flags: Vec<(i64, Box<str>)>,
    /// The bit that marks a task switched out while still runnable (printed as `+`).
    preempted: i64,
}

impl TaskStates {
    /// The bits of Linux 4.14 and later (include/trace/events/sched.h).
    pub fn since_4_14() -> Self {
        let names = ["S", "D", "T", "t", "X", "Z", "P", "I"];
        TaskStates {
            flags: (names.iter().enumerate())
                .map(|(bit, name)| (1 << bit, Box::from(*name)))
                .collect(),
            preempted: 0x100,
        }
    }

    /// Reads the `{ bit, "name" }` pairs of the `__print_flags` in a sched_switch print format;
    /// `None` when there are none or they are not distinct single bits.
    pub fn from_print_fmt(print_fmt: &str) -> Option<Self> {
        let start = print_fmt.find("__print_flags(")?;
        let mut rest = &print_fmt[start..];
        let mut flags: Vec<(i64, Box<str>)> = Vec::new();
        // The pairs follow the mask and the separator; the list ends at the first `)` that is
        // not inside a pair.
        while let Some(open) = rest.find(['{', ')']) {
            if rest.as_bytes()[open] == b')' && !flags.is_empty() {
                break;
            }
            let after = &rest[open + 1..];
            if rest.as_bytes()[open] == b')' {
                rest = after;
                continue;
            }
            let close = after.find('}')?;
            let (value, name) = after[..close].split_once(',')?;
            let name = name.trim().strip_prefix('"')?.strip_suffix('"')?;
            flags.push((parse_int(value.trim())?, name.into()));
            rest = &after[close + 1..];
        }
        let single_bits = flags.iter().all(|(bit, _)| bit.count_ones() == 1);
        let mut bits: Vec<i64> = flags.iter().map(|f| f.0).collect();
        bits.sort_unstable();
        bits.dedup();
        let top = *bits.last()?;
        let distinct = bits.len() == flags.len();
        let preempted = preemption_bit(print_fmt).unwrap_or(top << 1);
        (single_bits && distinct && top < 1 << 40).then_some(TaskStates { flags, preempted })
    }

    /// `state` as the kernel's format prints it: `R` when no named bit is set, else the set
    /// bits' letters joined by `|`; then `+` when the task was preempted.
    pub fn render(&self, state: i64) -> String {
        let mut s = String::with_capacity(4);
        for (bit, name) in &self.flags {
            if state & bit != 0 {
                if !s.is_empty() {
                    s.push('|');
                }
                s.push_str(name);
            }
        }
        if s.is_empty() {
            s.push('R');
        }
        if state & self.preempted != 0 {
            s.push('+');
        }
        s
    }

    /// The state whose [`TaskStates::render`] is `letters`: the inverse, for writers of traces
    /// whose readers decode the kernel's bits (Perfetto's `prev_state`). `None` when a letter
    /// is not one of these states' or the text is not what `render` writes.
    pub fn bits(&self, letters: &str) -> Option<i64> {
        let (named, preempted) = match letters.strip_suffix('+') {
            Some(named) => (named, self.preempted),
            None => (letters, 0),
        };
        if named == "R" {
            return Some(preempted);
        }
        let mut state = preempted;
        for letter in named.split('|') {
            let (bit, _) = self.flags.iter().find(|(_, name)| &**name == letter)?;
            state |= bit;
        }
        (self.render(state) == letters).then_some(state)
    }
}

/// The bit of `REC->prev_state & BIT ? "+" : ""` when the format spells it as a number: the
/// kernels before 4.14 name it `TASK_STATE_MAX`, which is not always the next bit above the
/// last letter (Linux 4.9 on Arm's Juno prints 4096 after `{ 1024, "N" }`). Newer kernels
/// spell it as an expression of the letters' bits, which the rule above gives.
fn preemption_bit(print_fmt: &str) -> Option<i64> {
    let test = print_fmt.find(r#"? "+""#)?;
    let before = print_fmt[..test].trim_end();
    let operand = before[before.rfind('&')? + 1..].trim();
    parse_int(operand).filter(|bit| bit.count_ones() == 1)
}

/// `0x00000010` or `16`.
fn parse_int(text: &str) -> Option<i64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sched_switch print format of LISA's Juno traces (Linux 4.x, shared fixtures
    /// trace-dat/): `TASK_STATE_MAX` is 4096, a bit above the one after the last letter.
    const JUNO: &str = r#""prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state & (4096-1) ? __print_flags(REC->prev_state & (4096-1), "|", { 1, "S"} , { 2, "D" }, { 4, "T" }, { 8, "t" }, { 16, "Z" }, { 32, "X" }, { 64, "x" }, { 128, "K" }, { 256, "W" }, { 512, "P" }, { 1024, "N" }) : "R", REC->prev_state & 4096 ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio"#;

    #[test]
    fn bits_invert_render_for_every_state_of_up_to_two_letters_and_refuse_other_text() {
        for states in [
            TaskStates::since_4_14(),
            TaskStates::from_print_fmt(JUNO).unwrap(),
        ] {
            let singles = states.flags.iter().map(|(bit, _)| *bit);
            let pairs = (states.flags.iter())
                .flat_map(|(a, _)| states.flags.iter().map(move |(b, _)| a | b));
            for state in std::iter::once(0).chain(singles).chain(pairs) {
                for state in [state, state | states.preempted] {
                    let letters = states.render(state);
                    assert_eq!(states.bits(&letters), Some(state), "{letters}");
                }
            }
        }
        let states = TaskStates::since_4_14();
        assert_eq!(states.bits("S"), Some(1));
        assert_eq!(states.bits("R+"), Some(0x100));
        assert_eq!(states.bits("D|S"), None, "not in the kernel's order");
        for text in ["", "Q", "S|", "+", "R|S", "S++"] {
            assert_eq!(states.bits(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_preemption_bit_the_format_spells_out_is_the_one_used() {
        let states = TaskStates::from_print_fmt(JUNO).unwrap();
        assert_eq!(states.render(4096), "R+");
        assert_eq!(states.render(1 | 4096), "S+");
    }

    /// The shape of the sched_switch print format of kernels before 4.14 (as the v4.9
    /// `TP_printk` in include/trace/events/sched.h expands): other bits, other letters, and
    /// `TASK_STATE_MAX` (2048) as the preemption mark.
    const BEFORE_4_14: &str = r#""prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state & (2048-1) ? __print_flags(REC->prev_state & (2048-1), "|", { 1, "S"} , { 2, "D" }, { 4, "T" }, { 8, "t" }, { 16, "Z" }, { 32, "X" }, { 64, "x" }, { 128, "K" }, { 256, "W" }, { 512, "P" }, { 1024, "N" }) : "R", REC->prev_state & 2048 ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio"#;

    #[test]
    fn the_4_14_table_prints_like_the_kernel() {
        let states = TaskStates::since_4_14();
        assert_eq!(states.render(0), "R");
        assert_eq!(states.render(0x100), "R+");
        assert_eq!(states.render(1), "S");
        assert_eq!(states.render(2), "D");
        assert_eq!(states.render(0x80), "I");
        assert_eq!(states.render(3), "S|D");
    }

    #[test]
    fn an_older_kernels_format_gives_its_own_letters_and_preemption_bit() {
        let states = TaskStates::from_print_fmt(BEFORE_4_14).unwrap();
        assert_eq!(states.render(16), "Z");
        assert_eq!(states.render(32), "X");
        assert_eq!(states.render(2048), "R+");
        assert_eq!(
            states.render(0x100),
            "W",
            "256 is a state before 4.14, not preemption"
        );
        assert_eq!(states.render(1 | 2048), "S+");
    }

    #[test]
    fn a_format_without_usable_pairs_is_not_read() {
        assert_eq!(
            TaskStates::from_print_fmt("\"prev_state=%ld\", REC->prev_state"),
            None
        );
        let not_bits = r#"__print_flags(REC->prev_state, "|", { 3, "S" }) : "R""#;
        assert_eq!(TaskStates::from_print_fmt(not_bits), None);
        let repeated = r#"__print_flags(REC->prev_state, "|", { 1, "S" }, { 1, "D" }) : "R""#;
        assert_eq!(TaskStates::from_print_fmt(repeated), None);
        let unclosed = r#"__print_flags(REC->prev_state, "|", { 1, "S" "#;
        assert_eq!(TaskStates::from_print_fmt(unclosed), None);
    }
}
