use schedlab_parse::ParserKind;

use crate::util::{all_tested, check_metrics, ctx, parse, quality};

const DIR: &str = "openssl-speed";

fn openssl(dir: &str, file: &str) -> schedlab_parse::Parsed {
    parse(ParserKind::Openssl, dir, file)
}

#[test]
fn recorded_cpu_time_run() {
    // Without -elapsed openssl measures CPU time: 76478 × 16 KiB in 0.72 s of CPU.
    let parsed = openssl("local", "openssl-speed-seconds1-bytes16384-sha256.txt");
    check_metrics(
        &parsed,
        &[
            ("sha256/16384/ops", 76478.0, "ops"),
            ("sha256/16384/cpu_time_s", 0.72, "s"),
            ("sha256/16384/bytes_per_s", 1740299380.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 3);
    assert!(parsed.quality.is_empty());
}

#[test]
fn recorded_elapsed_run() {
    let parsed = openssl(
        "local",
        "openssl-speed-elapsed-seconds1-bytes16384-sha256.txt",
    );
    check_metrics(
        &parsed,
        &[
            ("sha256/16384/ops", 90618.0, "ops"),
            ("sha256/16384/wall_time_s", 1.00, "s"),
            ("sha256/16384/bytes_per_s", 1484685310.0, "B/s"),
        ],
    );
}

#[test]
fn openssl_3_ops_lines_with_elapsed() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(
        DIR,
        "openssl-3.5.5-al2023-xeon8488c-elapsed-seconds10-sha256.txt",
    );
    check_metrics(
        &parsed,
        &[
            ("sha256/16/ops", 69225838.0, "ops"),
            ("sha256/64/wall_time_s", 10.01, "s"),
            ("sha256/16384/ops", 1044280.0, "ops"),
            ("sha256/16384/bytes_per_s", 1710948350.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 18);
}

#[test]
fn multi_without_a_type_header_uses_the_got_h_sizes() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(DIR, "lkp-openssl-3.0.1-multi16-seconds30-sha256.txt");
    check_metrics(
        &parsed,
        &[
            ("sha256/16/bytes_per_s", 771620330.0, "B/s"),
            ("sha256/16384/bytes_per_s", 13758062050.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 6);
}

#[test]
fn rsa_sign_verify_table() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(DIR, "lkp-openssl-3.0.1-multi16-seconds30-rsa4096.txt");
    check_metrics(
        &parsed,
        &[
            ("rsa 4096 bits/sign_s", 0.000510, "s"),
            ("rsa 4096 bits/verify_s", 0.000008, "s"),
            ("rsa 4096 bits/sign_per_s", 1959.9, "ops/s"),
            ("rsa 4096 bits/verify_per_s", 129694.5, "ops/s"),
        ],
    );
    assert_eq!(
        quality(&parsed),
        [
            "warning: lkp-openssl-3.0.1-multi16-seconds30-rsa4096.txt:1: skipped 2 line(s) of a form the openssl parser does not know, first: \"Running openssl-speed benchmark...\""
        ]
    );
}

#[test]
fn openssl_4_rsa_kem_and_signature_tables() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(
        DIR,
        "lkp-openssl-4.0.0-dev-multi256-seconds30-rsa4096-kem-sig-tables.txt",
    );
    let keygen: Vec<f64> = parsed
        .workload_metrics
        .iter()
        .filter(|m| m.metric == "rsa4096/keygen_per_s")
        .map(|m| m.value)
        .collect();
    assert_eq!(keygen, [173.2, 174.3]);
    check_metrics(
        &parsed,
        &[
            ("rsa 4096 bits/encrypt_per_s", 1249692.8, "ops/s"),
            ("rsa 4096 bits/decrypt_s", 0.000027, "s"),
            ("rsa4096/encaps_per_s", 1243835.5, "ops/s"),
            ("rsa4096/sign_per_s", 37077.0, "ops/s"),
        ],
    );
}

#[test]
fn openssl_1_0_five_sizes_cpu_time() {
    schedlab_testkit::shared_fixtures_or_skip!();
    // No "You have chosen…" line was captured, so the time is read as CPU time.
    let parsed = openssl(DIR, "openssl-1.0.2o-armv7-zynq-elapsed-evp-aes-128-ecb.txt");
    check_metrics(
        &parsed,
        &[
            ("aes-128-ecb/16/ops", 4131616.0, "ops"),
            ("aes-128-ecb/8192/cpu_time_s", 3.00, "s"),
            ("aes-128-ecb/8192/bytes_per_s", 25182210.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 15);
}

#[test]
fn openssl_1_1_nine_sizes_and_legacy_names_with_spaces() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(
        DIR,
        "openssl-1.1.1a-armv7-zynq-elapsed-evp-aes-128-ecb-9sizes-stderr-and-stdout.txt",
    );
    check_metrics(
        &parsed,
        &[
            ("aes-128-ecb/512/ops", 147615.0, "ops"),
            ("aes-128-ecb/512/wall_time_s", 3.00, "s"),
            ("aes-128-ecb/4096/bytes_per_s", 25333760.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 27);
    let parsed = openssl(
        DIR,
        "openssl-1.1.1a-armv7-zynq-elapsed-legacy-aes-128-cbc-name-with-space.txt",
    );
    check_metrics(
        &parsed,
        &[
            ("aes-128 cbc/16/ops", 3901399.0, "ops"),
            ("aes-128 cbc/16384/bytes_per_s", 22801070.0, "B/s"),
        ],
    );
}

#[test]
fn stdout_only_three_digests() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(DIR, "openssl-1.1.1f-sha-stdout-only-i7-3770.txt");
    check_metrics(
        &parsed,
        &[
            ("sha1/16384/bytes_per_s", 849619630.0, "B/s"),
            ("sha256/16/bytes_per_s", 75659300.0, "B/s"),
            ("sha512/8192/bytes_per_s", 533897220.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 18);
}

#[test]
fn appended_single_size_tables() {
    schedlab_testkit::shared_fixtures_or_skip!();
    let parsed = openssl(
        DIR,
        "openssl-3.0.14-macos-m1-bytes-evp-aes-256-gcm-appended.txt",
    );
    check_metrics(
        &parsed,
        &[
            ("AES-256-GCM/16384/bytes_per_s", 5813272580.0, "B/s"),
            ("AES-256-GCM/1024/bytes_per_s", 4659683330.0, "B/s"),
        ],
    );
    assert_eq!(parsed.workload_metrics.len(), 7);
    let parsed = openssl(
        DIR,
        "openssl-3.0.2-ryzen9-7950x-bytes-evp-aes-ctr-gcm-10rounds-wrapper.txt",
    );
    assert_eq!(parsed.workload_metrics.len(), 140);
    let first = &parsed.workload_metrics[0];
    assert_eq!(
        (first.metric.as_str(), first.value),
        ("AES-256-CTR/16384/bytes_per_s", 11873550340.0)
    );
    assert_eq!(
        quality(&parsed),
        [
            "warning: openssl-3.0.2-ryzen9-7950x-bytes-evp-aes-ctr-gcm-10rounds-wrapper.txt:1: skipped 11 line(s) of a form the openssl parser does not know, first: \"Openssl AES\""
        ]
    );
}

#[test]
fn text_without_results_is_an_error() {
    let err = schedlab_parse::parse(
        ParserKind::Openssl,
        "o.txt",
        b"version: 3.0.1\nsomething else\n",
        &ctx(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "o.txt:2: no `Doing …` line and no result table (hint: is this `openssl speed` output?)"
    );
}

/// A local fixture's bytes.
fn local(file: &str) -> Vec<u8> {
    std::fs::read(crate::util::local_dir().join(file)).unwrap()
}

/// openssl prints its table to stdout and its `Doing …` lines to stderr: parsed apart, the two
/// files give both, as the one file of `2>&1` does. The stderr says 30,568 ops in 0.37 s of
/// CPU, the stdout's table 1,353,584.09k bytes/s (30,568 × 16,384 B / 0.37 s = 1,353,584,086).
#[test]
fn stdout_and_stderr_parsed_apart_give_both_halves() {
    let stdout = local("openssl-speed-seconds1-bytes16384-sha256.stdout.txt");
    let stderr = local("openssl-speed-seconds1-bytes16384-sha256.stderr.txt");
    let parsed = schedlab_parse::parse_outputs(
        ParserKind::Openssl,
        &[
            ("raw/w.0.stdout.txt", &stdout),
            ("raw/w.0.stderr.txt", &stderr),
        ],
        &ctx(),
    )
    .unwrap();
    check_metrics(
        &parsed,
        &[
            ("sha256/16384/ops", 30568.0, "ops"),
            ("sha256/16384/cpu_time_s", 0.37, "s"),
            ("sha256/16384/bytes_per_s", 1353584090.0, "B/s"),
        ],
    );
    assert!(quality(&parsed).is_empty(), "{:?}", quality(&parsed));
}

/// `timeout 0.5 openssl speed -seconds 3 sha256`: stopped in its first block size, openssl
/// left half a `Doing …` line on stderr and nothing on stdout (0 bytes: it prints its table at
/// the end). The error names both files and why each gave nothing.
#[test]
fn outputs_without_results_name_every_file_read() {
    let stderr = local("openssl-speed-seconds3-sha256-timeout0.5.stderr.txt");
    let err = schedlab_parse::parse_outputs(
        ParserKind::Openssl,
        &[("raw/w.0.stdout.txt", b""), ("raw/w.0.stderr.txt", &stderr)],
        &ctx(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no results in raw/w.0.stdout.txt or raw/w.0.stderr.txt: raw/w.0.stdout.txt is empty; \
         raw/w.0.stderr.txt:1: no `Doing …` line and no result table (hint: is this `openssl \
         speed` output?)"
    );
}

#[test]
fn every_openssl_fixture_is_tested() {
    schedlab_testkit::shared_fixtures_or_skip!();
    all_tested(DIR, &["openssl-"], include_str!("openssl.rs"));
}

/// openssl prints a rate of at most 10,000 bytes/s in bytes/s, without the `k`
/// (apps/speed.c, `print_result`: `results > 10000 ? " %11.2fk" (÷1000) : " %11.2f "`), as a
/// starved nice-19 worker can. The recording above with its row rewritten to that format: a
/// constructed line, not a recording.
#[test]
fn a_rate_below_ten_kilobytes_per_second_is_printed_without_k_and_read_as_bytes() {
    let dir = crate::util::local_dir();
    let recorded =
        std::fs::read_to_string(dir.join("openssl-speed-seconds1-bytes16384-sha256.txt")).unwrap();
    let slow = recorded.replace("sha256         1740299.38k", "sha256             9830.40 ");
    assert_ne!(slow, recorded, "the row to rewrite is in the recording");
    let parsed =
        schedlab_parse::parse(ParserKind::Openssl, "slow.txt", slow.as_bytes(), &ctx()).unwrap();
    check_metrics(&parsed, &[("sha256/16384/bytes_per_s", 9830.40, "B/s")]);
}
