//! CPUs and their core classes from a sysfs tree (work in progress: issue 3, point 5).
