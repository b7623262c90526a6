//! `openssl speed` output: the `Doing …` progress lines and the result tables.
//!
//! The progress lines carry what the seeds need to recompute throughput on the wall clock
//! (page 8: 8,799,429 operations of 16 KiB in 50.003 s): the operation count and the time openssl
//! measured. That time is process CPU time unless `-elapsed` was given, and openssl's own bytes/s
//! hide the difference, so the measured time is named after its clock: `cpu_time_s` or
//! `wall_time_s` (the `You have chosen to measure elapsed time…` line decides).
//!
//! Metric names are `<algorithm>/<block size>/<measure>` for ciphers and digests
//! (`sha256/16384/ops`, `sha256/16384/cpu_time_s`, `sha256/16384/bytes_per_s`) and
//! `<row name>/<measure>` for the public-key tables (`rsa 4096 bits/sign_s`,
//! `rsa 4096 bits/sign_per_s`, `rsa4096/keygen_per_s`). Table values are converted from openssl's
//! 1000s of bytes per second to bytes per second.

use crate::text::{Metrics, Unrecognized, number, numbered_lines, split_last_tokens, text_error};
use crate::{ParseContext, ParseError, Parsed};

const PARSER: &str = "openssl";

/// The table openssl is printing, as the last header announced it.
enum Table {
    None,
    /// `type 16 bytes 64 bytes …` (or a `-multi` `+H:` line): block sizes in bytes.
    Blocks(Vec<u64>),
    /// `sign verify sign/s verify/s`, `keygen encaps decaps …`: one (measure, unit) per column.
    PublicKey(Vec<(String, &'static str)>),
}

/// Parses the stdout and stderr of `openssl speed` (1.0.x to 4.x, with or without `-multi`,
/// `-elapsed`, `-bytes`).
pub fn parse(text: &str, source_name: &str, ctx: &ParseContext) -> Result<Parsed, ParseError> {
    let mut metrics = Metrics::new(ctx, PARSER);
    let mut unknown = Unrecognized::new(PARSER);
    let mut elapsed = false;
    let mut table = Table::None;
    for (line_no, line) in numbered_lines(text) {
        let trimmed = line.trim();
        if trimmed.is_empty() || is_banner(trimmed) {
            continue;
        }
        if trimmed.starts_with("You have chosen to measure elapsed time") {
            elapsed = true;
            continue;
        }
        let understood = if let Some(rest) = trimmed.strip_prefix("Doing ") {
            read_doing(rest, elapsed, &mut metrics).is_some()
        } else if let Some(rest) = trimmed.strip_prefix("Got: +H:") {
            let sizes = rest.split_whitespace().next().unwrap_or("");
            let sizes = sizes
                .split(':')
                .map(|s| s.parse::<u64>().ok())
                .collect::<Option<Vec<u64>>>();
            sizes.map(|sizes| table = Table::Blocks(sizes)).is_some()
        } else if trimmed.starts_with("Got: ") || trimmed.starts_with("Forked child") {
            true
        } else if let Some(rest) = trimmed.strip_prefix("type ") {
            block_sizes(rest)
                .map(|sizes| table = Table::Blocks(sizes))
                .is_some()
        } else if let Some(columns) = public_key_header(trimmed) {
            table = Table::PublicKey(columns);
            true
        } else {
            match &table {
                Table::Blocks(sizes) => read_block_row(trimmed, sizes, &mut metrics).is_some(),
                Table::PublicKey(columns) => {
                    read_public_key_row(trimmed, columns, &mut metrics).is_some()
                }
                Table::None => false,
            }
        };
        if !understood {
            unknown.note(line_no, line);
        }
    }
    if metrics.rows.is_empty() {
        let line = unknown.first_line().unwrap_or(1);
        return Err(text_error(
            source_name,
            line,
            "no `Doing …` line and no result table (hint: is this `openssl speed` output?)",
        ));
    }
    let mut parsed = Parsed {
        workload_metrics: metrics.rows,
        ..Parsed::default()
    };
    parsed
        .quality
        .extend(unknown.into_quality(ctx, source_name));
    Ok(parsed)
}

/// Lines that describe the build, not the run.
fn is_banner(line: &str) -> bool {
    const PREFIXES: [&str; 9] = [
        "version:",
        "built on:",
        "options:",
        "compiler:",
        "CPUINFO:",
        "The 'numbers' are in",
        "OpenSSL ",
        "Could not open /dev/crypto",
        "+DT:",
    ];
    PREFIXES.iter().any(|p| line.starts_with(p))
}

/// `sha256 ops for 10s on 16 size blocks: 69225838 sha256 ops in 10.00s` (3.x),
/// `aes-128 cbc for 3s on 16 size blocks: 3901399 aes-128 cbc's in 3.00s` (1.x), or a
/// public-key form without blocks (`4096 bits private rsa's for 10s: 1234 4096 bits private RSA's in 9.98s`).
fn read_doing(rest: &str, elapsed: bool, metrics: &mut Metrics<'_>) -> Option<()> {
    let (what, result) = rest.split_once(": ")?;
    let (subject, duration) = what.rsplit_once(" for ")?;
    let subject = subject.strip_suffix(" ops").unwrap_or(subject);
    let subject = match duration.split_once(" on ") {
        Some((_, blocks)) => format!("{subject}/{}", blocks.strip_suffix(" size blocks")?.trim()),
        None => subject.to_owned(),
    };
    let count = number(result.split_whitespace().next()?)?;
    let (_, time) = result.rsplit_once(" in ")?;
    let seconds = number(time.trim().strip_suffix('s')?)?;
    let clock = if elapsed { "wall_time_s" } else { "cpu_time_s" };
    metrics.push(0, format!("{subject}/ops"), count, "ops");
    metrics.push(0, format!("{subject}/{clock}"), seconds, "s");
    Some(())
}

/// `16 bytes     64 bytes …` → `[16, 64, …]`.
fn block_sizes(header: &str) -> Option<Vec<u64>> {
    let tokens: Vec<&str> = header.split_whitespace().collect();
    if tokens.is_empty() || !tokens.len().is_multiple_of(2) {
        return None;
    }
    tokens
        .chunks(2)
        .map(|pair| {
            if pair[1] == "bytes" {
                pair[0].parse().ok()
            } else {
                None
            }
        })
        .collect()
}

/// `sha256   110761.34k   360789.57k …`: one bytes/s metric per block size. openssl prints
/// a rate above 10,000 bytes/s in thousands with a `k`, and a lower one in bytes/s without it
/// (apps/speed.c, `print_result`): a starved nice-19 worker's row can mix both.
fn read_block_row(line: &str, sizes: &[u64], metrics: &mut Metrics<'_>) -> Option<()> {
    let (name, tokens) = split_last_tokens(line, sizes.len())?;
    if name.is_empty() {
        return None;
    }
    let values = tokens
        .iter()
        .map(|t| match t.strip_suffix('k') {
            Some(thousands) => number(thousands).map(|k| k * 1000.0),
            // `%11.2f`: two decimals, so that `Round 1` of a wrapper script is not a result.
            None => (t
                .split_once('.')
                .is_some_and(|(_, decimals)| decimals.len() == 2))
            .then(|| number(t))
            .flatten(),
        })
        .collect::<Option<Vec<f64>>>()?;
    for (size, bytes_per_s) in sizes.iter().zip(values) {
        metrics.push(0, format!("{name}/{size}/bytes_per_s"), bytes_per_s, "B/s");
    }
    Some(())
}

/// A public-key table header: every token a column name openssl uses (`sign`, `verify/s`,
/// `encr./s`, `keygens/s`, `op`, …).
fn public_key_header(line: &str) -> Option<Vec<(String, &'static str)>> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.len() < 2 {
        return None;
    }
    tokens
        .iter()
        .map(|token| {
            let (base, per_second) = match token.strip_suffix("/s") {
                Some(base) => (base.trim_end_matches('.'), true),
                None => (*token, false),
            };
            let base = match base {
                "sign" | "signs" => "sign",
                "verify" => "verify",
                "encrypt" | "encr" => "encrypt",
                "decrypt" | "decr" => "decrypt",
                "keygen" | "keygens" => "keygen",
                "encaps" => "encaps",
                "decaps" => "decaps",
                "op" | "ops" => "op",
                _ => return None,
            };
            Some(if per_second {
                (format!("{base}_per_s"), "ops/s")
            } else {
                (format!("{base}_s"), "s")
            })
        })
        .collect()
}

/// `rsa 4096 bits 0.000510s 0.000008s   1959.9 129694.5`: seconds per operation, then
/// operations per second.
fn read_public_key_row(
    line: &str,
    columns: &[(String, &'static str)],
    metrics: &mut Metrics<'_>,
) -> Option<()> {
    let (name, tokens) = split_last_tokens(line, columns.len())?;
    if name.is_empty() {
        return None;
    }
    let values = tokens
        .iter()
        .map(|t| number(t.strip_suffix('s').unwrap_or(t)))
        .collect::<Option<Vec<f64>>>()?;
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    for ((measure, unit), value) in columns.iter().zip(values) {
        metrics.push(0, format!("{name}/{measure}"), value, unit);
    }
    Some(())
}
