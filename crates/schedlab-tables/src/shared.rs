//! One allocation per distinct string among the rows read back from a file.
//!
//! The event tables hold their repeated strings (run id, command name, task state, workload)
//! as `Arc<str>` so that rows can share them, and the perf reader's rows do. Rows decoded from
//! Parquet do not: serde allocates each row's strings anew, four allocations a slice, as much
//! memory again as the rows themselves on a trace's million slices. [`read_rows`] and
//! [`read_table`] pass every row through one [`SharedStrings`], which gives it the copies
//! already seen.
//!
//! [`read_rows`]: crate::read_rows
//! [`read_table`]: crate::read_table

use std::collections::HashSet;
use std::sync::Arc;

/// The distinct strings seen so far, each held once.
#[derive(Debug, Default)]
pub struct SharedStrings(HashSet<Arc<str>>);

impl SharedStrings {
    /// Points `text` at the shared copy of its value; the first of a value becomes that copy.
    pub fn share(&mut self, text: &mut impl Shareable) {
        text.share_in(self);
    }

    /// The shared copy of `text`, made on first sight.
    pub fn of(&mut self, text: &str) -> Arc<str> {
        match self.0.get(text) {
            Some(known) => Arc::clone(known),
            None => {
                let new: Arc<str> = text.into();
                self.0.insert(Arc::clone(&new));
                new
            }
        }
    }

    fn shared(&mut self, text: &mut Arc<str>) {
        match self.0.get(&**text) {
            Some(known) => *text = Arc::clone(known),
            None => {
                self.0.insert(Arc::clone(text));
            }
        }
    }
}

/// A field [`SharedStrings`] can share: a string, or a string that may be null.
pub trait Shareable {
    fn share_in(&mut self, strings: &mut SharedStrings);
}

impl Shareable for Arc<str> {
    fn share_in(&mut self, strings: &mut SharedStrings) {
        strings.shared(self);
    }
}

impl Shareable for Option<Arc<str>> {
    fn share_in(&mut self, strings: &mut SharedStrings) {
        if let Some(text) = self {
            strings.shared(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_end_up_as_one_allocation_and_others_stay_apart() {
        let mut strings = SharedStrings::default();
        let (mut a, mut b, mut c): (Arc<str>, Arc<str>, Arc<str>) =
            ("comm".into(), "comm".into(), "other".into());
        let mut none: Option<Arc<str>> = None;
        let mut some: Option<Arc<str>> = Some("comm".into());
        assert!(!Arc::ptr_eq(&a, &b));
        for text in [&mut a, &mut b, &mut c] {
            strings.share(text);
        }
        strings.share(&mut none);
        strings.share(&mut some);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(Arc::ptr_eq(&a, some.as_ref().unwrap()));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!((&*a, &*c, none), ("comm", "other", None));
        assert!(Arc::ptr_eq(&strings.of("comm"), &a));
        assert!(Arc::ptr_eq(&strings.of("new"), &strings.of("new")));
    }
}
