//! A column of nanosecond spans held in four bytes a value.
//!
//! A slice's run time and its delays are almost always under four seconds (`u32::MAX` ns), and a
//! run's slices are held whole while its figures are computed, so eight bytes a value would be
//! half the column wasted. The rare value that does not fit (a CPU idle for minutes, a thread
//! starved for seconds, a negative span from damaged data) is kept exactly, beside the rest.

/// Marks a value kept in `wide`.
const WIDE: u32 = u32::MAX;

#[derive(Debug, Default)]
pub(crate) struct NarrowColumn {
    values: Vec<u32>,
    /// The row and value of every value that does not fit, by row.
    wide: Vec<(u32, i64)>,
}

impl NarrowColumn {
    pub(crate) const fn new() -> NarrowColumn {
        NarrowColumn {
            values: Vec::new(),
            wide: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, value: i64) {
        self.extend(std::iter::once(value));
    }

    /// Appends `values`.
    pub(crate) fn extend(&mut self, values: impl Iterator<Item = i64>) {
        let first = self.values.len();
        let wide = &mut self.wide;
        self.values.extend(values.enumerate().map(|(i, value)| {
            match u32::try_from(value).ok().filter(|&v| v != WIDE) {
                Some(fits) => fits,
                None => {
                    let row = u32::try_from(first + i).expect("fewer values than u32 rows");
                    wide.push((row, value));
                    WIDE
                }
            }
        }));
    }

    /// Appends the values of `other`.
    pub(crate) fn append(&mut self, other: &NarrowColumn) {
        let offset = u32::try_from(self.values.len()).expect("fewer values than u32 rows");
        self.values.extend_from_slice(&other.values);
        (self.wide).extend(other.wide.iter().map(|&(row, value)| (row + offset, value)));
    }

    /// Inlined into the timeline's searches, which read millions of ends; the rare wide value
    /// is looked up out of line.
    #[inline]
    pub(crate) fn get(&self, row: usize) -> i64 {
        match self.values[row] {
            WIDE => self.wide(row),
            fits => i64::from(fits),
        }
    }

    #[cold]
    #[inline(never)]
    fn wide(&self, row: usize) -> i64 {
        let at = (self.wide)
            .binary_search_by_key(&(row as u32), |&(r, _)| r)
            .expect("every wide value is listed");
        self.wide[at].1
    }

    pub(crate) fn reserve(&mut self, rows: usize) {
        self.values.reserve(rows);
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        self.wide.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever the values, each reads back as it was pushed.
        #[test]
        fn every_value_reads_back_exactly(values in proptest::collection::vec(
            proptest::prop_oneof![
                0i64..10,
                (u32::MAX as i64 - 2)..(u32::MAX as i64 + 2),
                proptest::num::i64::ANY,
            ],
            0..100,
        )) {
            let mut column = NarrowColumn::default();
            for &v in &values {
                column.push(v);
            }
            let read: Vec<i64> = (0..values.len()).map(|row| column.get(row)).collect();
            proptest::prop_assert_eq!(read, values);
        }

        /// Two columns appended read back as the values of one and then the other's.
        #[test]
        fn appended_values_read_back_in_order(
            first in proptest::collection::vec(proptest::num::i64::ANY, 0..50),
            second in proptest::collection::vec(
                proptest::prop_oneof![0i64..10, proptest::num::i64::ANY],
                0..50,
            ),
        ) {
            let column = |values: &[i64]| {
                let mut column = NarrowColumn::default();
                for &v in values {
                    column.push(v);
                }
                column
            };
            let mut appended = column(&first);
            appended.append(&column(&second));
            let read: Vec<i64> = (0..first.len() + second.len()).map(|row| appended.get(row)).collect();
            proptest::prop_assert_eq!(read, [first, second].concat());
        }
    }
}
