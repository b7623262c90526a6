//! Where each key and value of a pipeline file is, by its YAML path.
//!
//! serde keeps no position for a mapping key nor for a plain value, and the checks compile makes
//! after deserializing (`nice` out of range, `busy` longer than `period`, `threads: 0`) are about
//! exactly those. Searching the text for `nice:` finds the first workload's key, not the wrong
//! one's, and nothing inside a flow mapping (`{ period: 10ms, busy: 20ms }`). So the file is read
//! once more as YAML events (serde-saphyr's own parser), and every node is indexed by its path
//! from the root: `collect` → `workloads` → `burst` → `nice`, in block and flow style alike.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Marker, Parser};

/// One step of a path: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl From<&str> for Step {
    fn from(key: &str) -> Step {
        Step::Key(key.to_owned())
    }
}

impl From<&String> for Step {
    fn from(key: &String) -> Step {
        Step::Key(key.clone())
    }
}

impl From<usize> for Step {
    fn from(index: usize) -> Step {
        Step::Index(index)
    }
}

/// The path `steps` (keys and indices) as owned steps.
macro_rules! yaml_path {
    ($($step:expr),* $(,)?) => {
        [$($crate::locate::Step::from($step)),*]
    };
}
pub(crate) use yaml_path;

/// Which end of a mapping entry a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The key: a missing or conflicting sibling, a key that does not apply.
    Key,
    /// The value: out of range, zero, empty.
    Value,
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub line: u64,
    pub column: u64,
}

impl From<Marker> for Place {
    fn from(marker: Marker) -> Place {
        Place {
            line: marker.line() as u64,
            column: marker.col() as u64 + 1,
        }
    }
}

impl From<serde_saphyr::Location> for Place {
    fn from(location: serde_saphyr::Location) -> Place {
        Place {
            line: location.line(),
            column: location.column(),
        }
    }
}

/// Where a node's key (its own position for a sequence item or the root) and value start.
#[derive(Debug, Clone, Copy)]
struct Node {
    key: Place,
    value: Place,
}

/// Every node of the first document of a YAML text, by path.
#[derive(Debug, Default)]
pub struct Positions {
    nodes: HashMap<Vec<Step>, Node>,
}

/// A collection being read: its path (None inside a complex key, whose nodes are not indexed).
enum Frame {
    Mapping {
        path: Option<Vec<Step>>,
        /// The key read and where, while its value is awaited.
        key: Option<(Option<String>, Place)>,
    },
    Sequence {
        path: Option<Vec<Step>>,
        next: usize,
    },
}

impl Positions {
    /// Indexes `source`. It has been deserialized already, so it is valid YAML; should the
    /// parser still stop early, what was read so far is kept and lookups fall back to a parent.
    pub fn of(source: &str) -> Positions {
        let mut positions = Positions::default();
        let mut stack: Vec<Frame> = Vec::new();
        for event in Parser::new_from_str(source) {
            let Ok((event, span)) = event else { break };
            let place = Place::from(span.start);
            match event {
                Event::Scalar(text, ..) => {
                    positions.node(&mut stack, place, Some(&text));
                }
                Event::Alias(_) => {
                    positions.node(&mut stack, place, None);
                }
                Event::MappingStart(..) => {
                    let path = positions.node(&mut stack, place, None);
                    stack.push(Frame::Mapping { path, key: None });
                }
                Event::SequenceStart(..) => {
                    let path = positions.node(&mut stack, place, None);
                    stack.push(Frame::Sequence { path, next: 0 });
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.pop();
                }
                Event::DocumentEnd => break,
                _ => {}
            }
        }
        positions
    }

    /// Records a node starting at `place` (`text` for a scalar) in the collection on top of
    /// `stack`, and returns its path: None for a mapping key, or inside one.
    fn node(&mut self, stack: &mut [Frame], place: Place, text: Option<&str>) -> Option<Vec<Step>> {
        let (path, key) = match stack.last_mut() {
            None => (Some(Vec::new()), place),
            Some(Frame::Sequence { path, next }) => {
                *next += 1;
                (extend(path, Step::Index(*next - 1)), place)
            }
            Some(Frame::Mapping { path, key }) => match key.take() {
                None => {
                    *key = Some((text.map(str::to_owned), place));
                    return None;
                }
                Some((Some(name), key_place)) => (extend(path, Step::Key(name)), key_place),
                Some((None, _)) => (None, place),
            },
        };
        if let Some(path) = &path {
            self.nodes.insert(path.clone(), Node { key, value: place });
        }
        path
    }

    /// Where `part` of the node at `path` is; a path not in the file (a default, a key that
    /// came through an alias) falls back to its nearest parent that is, and finally to 1:1.
    pub fn place(&self, path: &[Step], part: Part) -> Place {
        (0..=path.len())
            .rev()
            .find_map(|len| self.nodes.get(&path[..len]))
            .map_or(Place { line: 1, column: 1 }, |node| match part {
                Part::Key => node.key,
                Part::Value => node.value,
            })
    }
}

fn extend(path: &Option<Vec<Step>>, step: Step) -> Option<Vec<Step>> {
    let mut path = path.clone()?;
    path.push(step);
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(source: &str, path: &[Step], part: Part) -> (u64, u64) {
        let place = Positions::of(source).place(path, part);
        (place.line, place.column)
    }

    #[test]
    fn keys_and_values_are_found_in_block_and_flow_style() {
        let source = "\
collect:
  workloads:
    a: { nice: 1, periodic: { period: 10ms, busy: 20ms } }
    b:
      nice: 30
      cpus: [0, \"2-3\"]
";
        let busy = yaml_path!["collect", "workloads", "a", "periodic", "busy"];
        assert_eq!(at(source, &busy, Part::Key), (3, 45));
        assert_eq!(at(source, &busy, Part::Value), (3, 51));
        let nice = |name| yaml_path!["collect", "workloads", name, "nice"];
        assert_eq!(at(source, &nice("a"), Part::Key), (3, 10));
        assert_eq!(at(source, &nice("b"), Part::Key), (5, 7));
        assert_eq!(at(source, &nice("b"), Part::Value), (5, 13));
        let cpu = yaml_path!["collect", "workloads", "b", "cpus", 1];
        assert_eq!(at(source, &cpu, Part::Value), (6, 17));
        // Not in the file: its parent, the workload.
        let timeout = yaml_path!["collect", "workloads", "b", "timeout"];
        assert_eq!(at(source, &timeout, Part::Key), (4, 5));
        assert_eq!(at("", &busy, Part::Key), (1, 1));
    }
}
