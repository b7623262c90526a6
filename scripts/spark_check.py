#!/usr/bin/env python3
"""Reads a pipeline's Parquet datasets with Spark and with DuckDB, and checks that they agree.

`just spark-check PIPELINE` runs it on data/PIPELINE (see docs/src/scale.md). For each dataset (the
`runs` and `sched_slices` tables and every aggregate, or those named with --dataset) it prints
the rows per run as Spark reads them, and exits 1 when DuckDB counts other rows in the same
files. A dataset is a directory of Hive partitions (`tables/<name>/run_id=<id>/part-0.parquet`,
which both discover) or a single file (`tables/<name>.parquet`).

Why: docs/src/scale.md tells analysts that Spark reads the partitioned tables as DuckDB does, on one
machine or on a cluster; this script is that claim, tested on real files. Spark runs in local
mode; `--master spark://host:7077` (or SPARK_MASTER) sends the same reads to a cluster whose
workers see the same path.
"""

import argparse
import os
import shutil
import sys
from pathlib import Path

STAGES = ("tables", "aggregates")
DEFAULT_TABLES = ("runs", "sched_slices")


class Dataset:
    """One table or aggregate: a directory of partitions or a single Parquet file."""

    def __init__(self, root: Path, path: Path, partitioned: bool):
        self.path = path
        self.partitioned = partitioned
        self.shown = str(path.relative_to(root))
        self.stage = path.parent.name


def find_datasets(root: Path) -> dict[str, Dataset]:
    found: dict[str, Dataset] = {}
    for stage in STAGES:
        directory = root / stage
        if not directory.is_dir():
            continue
        for entry in sorted(directory.iterdir()):
            if entry.name.startswith((".", "_")):
                continue  # a table being written (.tmp-*), or Spark's own metadata
            if entry.is_dir() and any(entry.glob("*/*.parquet")):
                found.setdefault(entry.name, Dataset(root, entry, True))
            elif entry.is_file() and entry.suffix == ".parquet":
                found.setdefault(entry.stem, Dataset(root, entry, False))
    return found


def sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def duckdb_counts(con, dataset: Dataset) -> dict:
    """Rows per run_id as DuckDB reads them ({None: rows} without a run_id column)."""
    if dataset.partitioned:
        source = f"read_parquet({sql_text(str(dataset.path / '*' / '*.parquet'))}, hive_partitioning = true)"
    else:
        source = f"read_parquet({sql_text(str(dataset.path))})"
    columns = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    if "run_id" not in columns:
        return {None: con.execute(f"SELECT count(*) FROM {source}").fetchone()[0]}
    rows = con.execute(f"SELECT run_id, count(*) FROM {source} GROUP BY run_id").fetchall()
    return dict(rows)


def spark_counts(spark, dataset: Dataset) -> dict:
    """Rows per run_id as Spark reads them; a directory's `run_id=` partitions are discovered."""
    frame = spark.read.parquet(str(dataset.path))
    if "run_id" not in frame.columns:
        return {None: frame.count()}
    return {row["run_id"]: row["count"] for row in frame.groupBy("run_id").count().collect()}


def compare(name: str, dataset: Dataset, spark: dict, duck: dict) -> int:
    """Prints the per-run counts of one dataset; returns how many disagree."""
    kind = f"{len(spark)} partitions" if dataset.partitioned else "one file"
    print(f"{name} ({dataset.shown}, {kind})")
    if dataset.partitioned and None in duck and None not in spark:
        print(
            "  MISMATCH: DuckDB found no run_id partition column (DuckDB takes no directory "
            "`run_id=...` whose value holds another `=` for a partition)"
        )
        return 1
    width = max([len(str(run)) for run in spark.keys() | duck.keys()] + [6])
    print(f"  {'run_id':<{width}} {'spark':>10} {'duckdb':>10}")
    wrong = 0
    for run in sorted(spark.keys() | duck.keys(), key=str):
        mine, theirs = spark.get(run), duck.get(run)
        verdict = "" if mine == theirs else "  MISMATCH"
        wrong += mine != theirs
        print(f"  {str(run if run is not None else '(all)'):<{width}} {mine!s:>10} {theirs!s:>10}{verdict}")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline_dir", type=Path, help="a pipeline's data directory (data/NAME)")
    parser.add_argument(
        "--dataset",
        action="append",
        default=[],
        help="a table or aggregate to check (repeatable; default: runs, sched_slices, every aggregate)",
    )
    parser.add_argument(
        "--master",
        default=os.environ.get("SPARK_MASTER", "local[*]"),
        help="Spark master URL (default: local mode, or SPARK_MASTER)",
    )
    args = parser.parse_args()

    root = args.pipeline_dir
    found = find_datasets(root)
    if not found:
        print(f"spark-check: {root}: no tables or aggregates (hint: `schedlab analyze` writes them)", file=sys.stderr)
        return 2
    missing = [name for name in args.dataset if name not in found]
    if missing:
        print(f"spark-check: {root}: no dataset {', '.join(missing)} (there: {', '.join(sorted(found))})", file=sys.stderr)
        return 2
    names = args.dataset or [
        *(name for name in DEFAULT_TABLES if name in found),
        *(name for name, dataset in found.items() if dataset.stage == "aggregates"),
    ]
    if args.master.startswith("local") and not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        print("spark-check: Spark needs Java (hint: apt-get install default-jre-headless)", file=sys.stderr)
        return 2

    import duckdb
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master)
        .appName("schedlab spark-check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # run ids are names, never numbers, whatever their text looks like
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    con = duckdb.connect()
    wrong = 0
    counted = 0
    try:
        for name in names:
            dataset = found[name]
            spark_rows = spark_counts(spark, dataset)
            duck_rows = duckdb_counts(con, dataset)
            wrong += compare(name, dataset, spark_rows, duck_rows)
            counted += len(spark_rows)
    finally:
        spark.stop()
    if wrong:
        print(f"spark-check: {wrong} count(s) differ between Spark and DuckDB", file=sys.stderr)
        return 1
    print(f"spark-check: {len(names)} dataset(s), {counted} per-run count(s): Spark and DuckDB agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
