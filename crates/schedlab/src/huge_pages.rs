//! The process's allocator: glibc's, except that an allocation of [`LARGE`] bytes or more is
//! a mapping of its own, backed by transparent huge pages.
//!
//! The aggregate stage holds a run's slices in columns of several megabytes each, and filling
//! them faults memory in a 4 KiB page at a time: tens of thousands of faults for a
//! whole-machine trace. A mapping asked for huge pages (`madvise(MADV_HUGEPAGE)`, honoured in
//! the kernel's default `madvise` mode) faults in 2 MiB at a time. Only large allocations are
//! mapped so: asked of the whole heap (jemalloc's `thp:always`), huge pages round every sparse
//! stretch of it up to 2 MiB, and the stages' peak memory grows by half. Below [`LARGE`], glibc
//! keeps and reuses freed memory as `keep_freed_memory` in `main` asks it to.

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations from this size up are mappings of their own.
const LARGE: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and on arm64 with 4 KiB pages: a mapping
/// starts on one, so that as much of it as can be is huge pages.
const HUGE_PAGE: usize = 2 << 20;

/// The smallest page.
const PAGE: usize = 4096;

pub struct HugePagesForLargeAllocations;

/// Whether `layout` is one this allocator maps itself. A page's alignment is all a mapping
/// keeps when `mremap` moves it.
fn mapped(layout: Layout) -> bool {
    layout.size() >= LARGE && layout.align() <= PAGE
}

/// `size` rounded up to whole pages, not to huge pages: what a mapping has past its last whole
/// huge page is faulted in a page at a time, as far as it is used.
fn mapping_len(size: usize) -> usize {
    size.div_ceil(PAGE) * PAGE
}

/// A new zeroed mapping of `mapping_len(size)` bytes that starts on a huge page, asked for
/// huge pages; null if the kernel has no memory to map.
unsafe fn map(size: usize) -> *mut u8 {
    let len = mapping_len(size);
    // SAFETY: an anonymous private mapping of `len + HUGE_PAGE` bytes at no fixed address;
    // the unaligned head and the tail beyond `len` are unmapped again, so exactly
    // `[start, start + len)` stays mapped.
    unsafe {
        let over = libc::mmap(
            std::ptr::null_mut(),
            len + HUGE_PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if over == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        let over = over.cast::<u8>();
        let head = over.align_offset(HUGE_PAGE);
        let start = over.add(head);
        if head > 0 {
            libc::munmap(over.cast(), head);
        }
        let tail = HUGE_PAGE - head;
        if tail > 0 {
            libc::munmap(start.add(len).cast(), tail);
        }
        // A kernel without transparent huge pages refuses; the mapping is good either way.
        libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE);
        start
    }
}

// SAFETY: every allocation is freed by the allocator that made it: `mapped` decides by the
// layout, which the caller passes unchanged to `dealloc` and `realloc`.
unsafe impl GlobalAlloc for HugePagesForLargeAllocations {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match mapped(layout) {
            // SAFETY: a fresh mapping of at least `layout.size()` bytes, aligned to a huge page.
            true => unsafe { map(layout.size()) },
            // SAFETY: the caller's contract, passed on.
            false => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match mapped(layout) {
            // SAFETY: as `alloc`; a fresh anonymous mapping reads as zeros.
            true => unsafe { map(layout.size()) },
            // SAFETY: the caller's contract, passed on.
            false => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match mapped(layout) {
            // SAFETY: `ptr` is a mapping `map` made for this layout's size.
            true => unsafe {
                libc::munmap(ptr.cast(), mapping_len(layout.size()));
            },
            // SAFETY: the caller's contract, passed on.
            false => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract: `new_size` is non-zero and fits `layout.align()`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (mapped(layout), mapped(new_layout)) {
            // SAFETY: the caller's contract, passed on.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            // SAFETY: `ptr` is a mapping of `mapping_len(layout.size())` bytes; the kernel
            // grows or shrinks it, moving it where needed, its huge page advice with it.
            (true, true) => unsafe {
                let moved = libc::mremap(
                    ptr.cast(),
                    mapping_len(layout.size()),
                    mapping_len(new_size),
                    libc::MREMAP_MAYMOVE,
                );
                match moved {
                    libc::MAP_FAILED => std::ptr::null_mut(),
                    moved => moved.cast(),
                }
            },
            _ => {
                // SAFETY: a new allocation of the new layout, the old one's bytes that fit it
                // copied over, and the old one freed by the allocator that made it.
                unsafe {
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping of this process that holds `at`, from /proc/self/smaps.
    fn flags_of_mapping_at(at: usize) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((start, end)) = range.split_once('-')
                && let (Ok(start), Ok(end)) = (
                    usize::from_str_radix(start, 16),
                    usize::from_str_radix(end, 16),
                )
            {
                inside = (start..end).contains(&at);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return flags.split_whitespace().map(str::to_owned).collect();
            }
        }
        panic!("no mapping of this process holds {at:#x}");
    }

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    /// Byte `i` of the pattern the tests write.
    fn pattern(i: usize) -> u8 {
        (i % 251) as u8
    }

    #[test]
    fn a_large_allocation_is_its_own_mapping_advised_huge_pages() {
        let modes = "/sys/kernel/mm/transparent_hugepage/enabled";
        match std::fs::read_to_string(modes) {
            Ok(mode) if !mode.contains("[never]") => {}
            _ => {
                let why = format!("this kernel has no transparent huge pages ({modes})");
                schedlab_testkit::skip(&schedlab_testkit::test_name(), &why);
                return;
            }
        }
        let alloc = HugePagesForLargeAllocations;
        let size = LARGE + 12345;
        // SAFETY: a non-zero layout; the block is freed with the same layout.
        unsafe {
            let block = alloc.alloc(layout(size));
            assert!(!block.is_null());
            assert_eq!(block as usize % HUGE_PAGE, 0, "starts on a huge page");
            assert!(
                flags_of_mapping_at(block as usize)
                    .iter()
                    .any(|f| f == "hg"),
                "the mapping is advised huge pages (VmFlags hg)"
            );
            let small = alloc.alloc(layout(LARGE / 2));
            assert!(
                !flags_of_mapping_at(small as usize)
                    .iter()
                    .any(|f| f == "hg"),
                "a smaller allocation is glibc's heap, not advised"
            );
            alloc.dealloc(small, layout(LARGE / 2));
            alloc.dealloc(block, layout(size));
        }
    }

    #[test]
    fn bytes_survive_every_realloc_between_heap_and_mapping() {
        let alloc = HugePagesForLargeAllocations;
        let sizes = [
            1000,
            LARGE + 1,
            3 * LARGE,
            LARGE + 7,
            LARGE - 1,
            5 * LARGE,
            64,
        ];
        // SAFETY: each realloc gets the block and layout the one before returned; the last
        // block is freed with its layout.
        unsafe {
            let mut size = sizes[0];
            let mut block = alloc.alloc_zeroed(layout(size));
            for i in 0..size {
                *block.add(i) = pattern(i);
            }
            for &next in &sizes[1..] {
                block = alloc.realloc(block, layout(size), next);
                assert!(!block.is_null(), "{size} -> {next}");
                let kept = size.min(next);
                assert!(
                    (0..kept).all(|i| *block.add(i) == pattern(i)),
                    "{size} -> {next}: the first {kept} bytes are kept"
                );
                for i in kept..next {
                    *block.add(i) = pattern(i);
                }
                size = next;
            }
            alloc.dealloc(block, layout(size));
        }
    }

    #[test]
    fn a_large_zeroed_allocation_reads_as_zeros() {
        let alloc = HugePagesForLargeAllocations;
        let size = 2 * LARGE;
        // SAFETY: a non-zero layout; the block is freed with the same layout.
        unsafe {
            let block = alloc.alloc_zeroed(layout(size));
            assert!((0..size).step_by(PAGE / 2).all(|i| *block.add(i) == 0));
            alloc.dealloc(block, layout(size));
        }
    }
}
