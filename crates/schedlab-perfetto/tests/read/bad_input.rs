//! Cut, damaged and foreign files: each refused with the file and byte offset named, before
//! any row is handed over; `salvage` reads the packets before a cut.

use std::path::Path;

use schedlab_perf::SchedOptions;
use schedlab_perfetto::{PerfettoError, read_sched, stream_sched};

use crate::writer::{options, recorded};

/// The offsets at which `file`'s packet records start, read independently of the crate: a
/// key byte 0x0a and a varint length.
fn packet_starts(file: &[u8]) -> Vec<usize> {
    let (mut starts, mut pos) = (Vec::new(), 0);
    while pos < file.len() {
        assert_eq!(file[pos], 0x0a, "a packet record at byte {pos}");
        starts.push(pos);
        let (mut len, mut shift, mut at) = (0usize, 0, pos + 1);
        loop {
            let b = file[at];
            len |= usize::from(b & 0x7f) << shift;
            at += 1;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        pos = at + len;
    }
    starts
}

/// Reads `bytes` as a file, streaming, and says whether any batch was handed over.
fn read_bytes(dir: &Path, bytes: &[u8], opts: &SchedOptions) -> (Result<(), PerfettoError>, bool) {
    let path = dir.join("bad.pftrace");
    std::fs::write(&path, bytes).unwrap();
    let mut handed = false;
    let result = stream_sched(&path, opts, |_, _| handed = true).map(|_| ());
    (result, handed)
}

#[test]
fn cut_damaged_and_foreign_files_name_the_byte_and_write_nothing() {
    let Some(recording) = recorded() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::read(recording.path("trace.pftrace")).unwrap();
    let starts = packet_starts(&file);
    assert!(starts.len() > 3, "{} packets", starts.len());
    let last = *starts.last().unwrap();

    // Cut inside the last packet.
    let cut = &file[..last + 10];
    let (result, handed) = read_bytes(dir.path(), cut, &options());
    let err = result.unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, PerfettoError::Truncated { offset, .. } if offset == last as u64),
        "{message}"
    );
    assert!(
        message.contains("bad.pftrace: byte ") && message.contains("truncated"),
        "{message}"
    );
    assert!(message.contains("--salvage"), "{message}");
    assert!(!handed, "nothing is handed over before the error");

    // Salvaged: the packets before the cut, and a quality row that says where it stopped.
    let salvage = SchedOptions {
        salvage: true,
        ..options()
    };
    let path = dir.path().join("cut.pftrace");
    std::fs::write(&path, cut).unwrap();
    let salvaged = read_sched(&path, &salvage).unwrap();
    let whole = read_sched(&recording.path("trace.pftrace"), &options()).unwrap();
    assert!(!salvaged.sched.sched_slices.is_empty());
    assert!(salvaged.sched.sched_slices.len() < whole.sched.sched_slices.len());
    assert!(
        (salvaged.sched.quality.iter())
            .any(|q| q.message.contains(&format!("salvaged: byte {last}"))),
        "{:#?}",
        salvaged.sched.quality
    );

    // A length that runs past the end of the file: the first packet's length made huge.
    let mut long = file[..starts[1]].to_vec();
    long.truncate(1);
    long.extend([0xff, 0xff, 0xff, 0x7f]);
    long.extend(&file[starts[1]..]);
    let (result, _) = read_bytes(dir.path(), &long, &options());
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("byte 0: not a Perfetto trace") && message.contains("ends at byte"),
        "{message}"
    );
    // The same past the first packet: truncated at that packet.
    let mut long = file[..starts[2]].to_vec();
    long.extend([0x0a, 0xff, 0xff, 0xff, 0x7f, 0x01]);
    let (result, _) = read_bytes(dir.path(), &long, &options());
    let err = result.unwrap_err();
    assert!(
        matches!(err, PerfettoError::Truncated { offset, .. } if offset == starts[2] as u64),
        "{err}"
    );

    // Garbage in place of the third packet.
    let mut garbage = file.clone();
    garbage[starts[2]] = 0xde;
    let (result, handed) = read_bytes(dir.path(), &garbage, &options());
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains(&format!("byte {}: a record with key byte 0xde", starts[2])),
        "{message}"
    );
    assert!(!handed);

    // Garbage from the start: not a Perfetto trace.
    let (result, _) = read_bytes(dir.path(), b"PERFILE2 and then some", &options());
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("bad.pftrace: byte 0: not a Perfetto trace"),
        "{message}"
    );

    // Only the process tree (the first packet): a trace without sched events.
    let (result, _) = read_bytes(dir.path(), &file[..starts[1]], &options());
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("no ftrace sched_switch events"),
        "{message}"
    );
    assert!(
        message.contains("sched/sched_switch"),
        "the hint names the event: {message}"
    );
}
