//! Core classes and CPU lists: the machine's classes with `topology:` laid over them, and every
//! CPU list checked against them.

use std::collections::BTreeMap;

use schedlab_topology::LAST_CPU;

use crate::diagnostic::closest;
use crate::locate::{Part, Step};
use crate::raw::{CpuItem, RawPipeline};

use super::{Checker, NOT_A_CLASS};

impl Checker<'_> {
    /// `class_order`: each class once, and only declared classes when the pipeline declares
    /// its topology (detected class names are known only at analysis).
    pub(super) fn class_order(&mut self, raw: &RawPipeline) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        for class in raw.class_order.iter().flatten() {
            if order.contains(&class.value) {
                self.error_at(
                    class,
                    format!("class `{}` is listed twice", class.value),
                    Some("list each class once, fastest first".into()),
                );
            } else if let Some(declared) = &raw.topology
                && !declared.contains_key(&class.value)
            {
                let hint = closest(&class.value, declared.keys().map(String::as_str))
                    .map(|best| format!("did you mean `{best}`?"));
                self.error_at(
                    class,
                    format!(
                        "`{}` is not a class of this pipeline's `topology`",
                        class.value
                    ),
                    hint,
                );
            }
            order.push(class.value.clone());
        }
        order
    }

    /// A core class this machine (with the pipeline's `topology:`) does not have.
    pub(super) fn missing_class(&self, class: &str) -> (String, Option<String>) {
        self.lacks_class.set(true);
        let names: Vec<&str> = self.classes.iter().map(|(name, _)| name.as_str()).collect();
        let has = if names.is_empty() {
            "no known classes".to_owned()
        } else {
            names.join(", ")
        };
        let message = format!("`{class}` {NOT_A_CLASS} (it has {has})");
        let hint = (names.iter())
            .find(|name| name.eq_ignore_ascii_case(class))
            .map(|name| format!("did you mean `{name}`?"))
            .unwrap_or_else(|| {
                "`schedlab topology` lists the classes; a pipeline can declare its own, \
                 e.g. `topology: { P: [0], E: [1] }`"
                    .into()
            });
        (message, Some(hint))
    }

    /// CPU items (at `at`) as a sorted list; text items may use `${vars}` and commas
    /// (`"${cpu}"`, `"0,2-3"`), and where `classes` is true, core classes: `P` (every CPU of the
    /// class) and `E:2` (its first two CPUs).
    pub(super) fn cpu_list(
        &mut self,
        at: &[Step],
        items: &[CpuItem],
        vars: &BTreeMap<String, String>,
        classes: bool,
    ) -> Vec<u32> {
        if items.is_empty() {
            self.error_at_path(
                at,
                Part::Value,
                "an empty CPU list".into(),
                Some("list one or more CPUs, e.g. `[0, \"2-3\"]`".into()),
            );
        }
        let mut cpus = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let mut at = at.to_vec();
            at.push(Step::Index(index));
            let text = match item {
                CpuItem::One(cpu) => cpu.to_string(),
                CpuItem::Range(text) => match self.substituted_at(&at, text, vars) {
                    Some(text) => text,
                    None => continue,
                },
            };
            for part in text.split(',') {
                let part = part.trim();
                let error = if let Some(range) = parse_range(part) {
                    cpus.extend(range);
                    continue;
                } else if classes && part.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    match self.class_cpus(part) {
                        Ok(members) => {
                            cpus.extend(members);
                            continue;
                        }
                        // Through a variable (a matrix value, usually): say which value.
                        Err((message, hint)) => match item {
                            CpuItem::Range(written) if *written != text => {
                                (format!("`{written}` is `{text}` here: {message}"), hint)
                            }
                            _ => (message, hint),
                        },
                    }
                } else {
                    let classes = if classes {
                        ", a class (P, \"E:1\")"
                    } else {
                        ""
                    };
                    (
                        format!("`{text}` is not a CPU list"),
                        Some(format!(
                            "write CPUs (0 to {LAST_CPU}) as 3, \"4-11\"{classes}, \"any\" or \"${{var}}\" (a defined variable)"
                        )),
                    )
                };
                self.error_at_path(&at, Part::Value, error.0, error.1);
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }

    /// The CPUs a class item names: `P`, every CPU of the class; `P:2`, its first two.
    pub(super) fn class_cpus(&self, item: &str) -> Result<Vec<u32>, (String, Option<String>)> {
        let (class, count) = match item.split_once(':') {
            Some((class, count)) => (class, Some(count)),
            None => (item, None),
        };
        let Some((_, members)) = self.classes.iter().find(|(name, _)| name == class) else {
            return Err(self.missing_class(class));
        };
        let Some(count) = count else {
            return Ok(members.clone());
        };
        match count.parse::<usize>() {
            Ok(n) if n >= 1 && n <= members.len() => Ok(members[..n].to_vec()),
            Ok(n) if n >= 1 => Err((
                format!(
                    "`{item}` asks for {n} CPUs of class {class}, which has {} here",
                    members.len()
                ),
                Some(format!("`{class}` alone is every CPU of the class")),
            )),
            _ => Err((
                format!("`{item}` needs a count of CPUs after the colon"),
                Some(format!("`{class}:1` is the class's first CPU")),
            )),
        }
    }
}

/// The machine's `classes` with `declared` laid over them, as the parse stage lays a pipeline's
/// `topology:` over the detected CPUs (`schedlab_topology::apply_declared`): declared CPUs
/// belong to their declared class, every other CPU keeps its class, declared classes come
/// first, and a class left without CPUs is gone. Each class's CPUs are sorted.
pub(super) fn laid_over(
    classes: &[(String, Vec<u32>)],
    declared: &[(String, Vec<u32>)],
) -> Vec<(String, Vec<u32>)> {
    let is_declared = |cpu: &u32| declared.iter().any(|(_, cpus)| cpus.contains(cpu));
    let mut merged = declared.to_vec();
    for (class, cpus) in classes {
        let kept: Vec<u32> = cpus
            .iter()
            .copied()
            .filter(|cpu| !is_declared(cpu))
            .collect();
        match merged.iter_mut().find(|(name, _)| name == class) {
            Some((_, members)) => members.extend(kept),
            None => merged.push((class.clone(), kept)),
        }
    }
    merged.retain(|(_, cpus)| !cpus.is_empty());
    for (_, cpus) in &mut merged {
        cpus.sort_unstable();
        cpus.dedup();
    }
    merged
}

/// `3` or `4-11`, CPUs up to [`LAST_CPU`], in the kernel's cpulist syntax.
pub(super) fn parse_range(text: &str) -> Option<Vec<u32>> {
    (!text.trim().is_empty())
        .then(|| schedlab_topology::parse_cpu_list(text).ok())
        .flatten()
}
