//! Damaged, cut and foreign files: an error naming the file and the byte, with a hint, or
//! (with salvage) the events up to the cut; never a panic.
