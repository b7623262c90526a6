# schedlab: `just` lists the recipes; `just quickstart` and `just test` are the two to know.

set shell := ["bash", "-euo", "pipefail", "-c"]

venv := justfile_directory() / ".venv"

# List the recipes.
default:
    @just --list --unsorted

# Build schedlab and run pipelines/quickstart.yaml on this machine (all four stages).
quickstart: build
    target/release/schedlab run pipelines/quickstart.yaml
    @echo "tables: data/quickstart/tables/<table>/run_id=<run>/   aggregates: data/quickstart/aggregates/"

# Build the release binary.
build:
    cargo build --release -p schedlab

# Run pipelines/NAME.yaml: collect what is missing, recompute what is stale.
run NAME *ARGS: build
    target/release/schedlab run pipelines/{{NAME}}.yaml {{ARGS}}

# Parse, aggregate and summarize pipelines/NAME.yaml from the runs on disk (never collects).
analyze NAME *ARGS: build
    target/release/schedlab analyze pipelines/{{NAME}}.yaml {{ARGS}}

# Compare pipelines/NAME.yaml's runs by label (or --by variant / a matrix variable), with 95 % intervals.
compare NAME *ARGS: build
    target/release/schedlab compare pipelines/{{NAME}}.yaml {{ARGS}}

# How many runs pipelines/NAME.yaml's groups need for a difference of PERCENT (e.g. 1%).
plan NAME PERCENT *ARGS: build
    target/release/schedlab plan pipelines/{{NAME}}.yaml --detect {{PERCENT}} {{ARGS}}

# Run pipelines/NAME.yaml as `run` does, then exit by its expectations (0 hold, 1 fail, 2 cannot judge).
check NAME *ARGS: build
    target/release/schedlab check pipelines/{{NAME}}.yaml {{ARGS}}

# Which runs of pipelines/NAME.yaml are on disk, and which stages are stale and why.
status NAME: build
    target/release/schedlab status pipelines/{{NAME}}.yaml

# Man pages from the clap definitions: target/man/schedlab.1 and schedlab-COMMAND.1.
man: build
    target/release/schedlab man --out target/man

# Check every pipeline. A full form names the core classes it needs and fails validation on a
# machine without them (`--short` validates the short forms, which run on any machine).
validate: build
    target/release/schedlab validate pipelines/*.yaml

# Every test: the Rust workspace, then the notebooks executed against a real quickstart run.
test: python-env
    cargo test --workspace
    cargo build -p schedlab
    SCHEDLAB_BIN=target/debug/schedlab {{venv}}/bin/python -m pytest -q notebooks

# The Python environment the notebooks (and their tests, and the Rust tests that check statistics against SciPy) use.
python-env:
    test -x {{venv}}/bin/python || python3 -m venv {{venv}}
    {{venv}}/bin/python -c "import datafusion, duckdb, matplotlib, perfetto, polars, pyarrow, nbclient, pytest, scipy, statsmodels" 2>/dev/null || {{venv}}/bin/pip install -q -r notebooks/requirements.txt

# Optional: read PIPELINE's tables and aggregates with Spark (local mode) and check the rows per run against DuckDB's (docs/src/scale.md). First use installs Java (apt, as root) and pyspark into .venv. ARGS: --dataset NAME, --master URL.
spark-check PIPELINE *ARGS: python-env
    command -v java >/dev/null || { apt-get update -q && apt-get install -y -q default-jre-headless; }
    {{venv}}/bin/python -c "import pyspark" 2>/dev/null || {{venv}}/bin/pip install -q pyspark
    {{venv}}/bin/python scripts/spark_check.py "${SCHEDLAB_DATA:-data}/{{PIPELINE}}" {{ARGS}}

# Build the book in docs/ (docs/book/index.html) with mdBook, installed by cargo on first use.
docs:
    command -v mdbook >/dev/null || cargo install --locked mdbook
    mdbook build docs

# Open the notebooks (Jupyter installed into .venv on first use).
notebooks: python-env
    {{venv}}/bin/python -c "import notebook" 2>/dev/null || {{venv}}/bin/pip install -q notebook
    cd notebooks && SCHEDLAB_DATA=../data {{venv}}/bin/jupyter notebook

# Benchmarks on real traces: schedlab's perf.data reader against `perf sched timehist` (also on a
# compressed `-z` trace), then what adding a run to 1 and to 20 stored runs costs (and the
# analysis's peak memory against the trace).
bench:
    crates/schedlab-perf/bench.sh
    crates/schedlab-runner/bench/incremental.sh

# Property tests over truncated, mutated and random input for every parser and for pipeline validation (more cases: PROPTEST_CASES=100000).
fuzz:
    PROPTEST_CASES=${PROPTEST_CASES:-5000} cargo test --release -p schedlab-parse --test fuzz
    PROPTEST_CASES=${PROPTEST_CASES:-5000} cargo test --release -p schedlab-perf --test fuzz
    PROPTEST_CASES=${PROPTEST_CASES:-5000} cargo test --release -p schedlab-tracecmd --test fuzz
    PROPTEST_CASES=${PROPTEST_CASES:-5000} cargo test --release -p schedlab-spec --test fuzz

# What CI checks, locally: formatting, lints, tests.
ready: && test
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings
