"""Executes every notebook against real runs (quickstart.ipynb against the quickstart, compare.ipynb
against a pipeline collected under two labels and compared), so a notebook that no longer matches
the table contract fails the test suite; and, outside any notebook, reads the quickstart's
Hive-partitioned tables with DuckDB, polars and DataFusion, so the layout the notebooks (and
users' own queries) rely on is checked engine by engine.

The quickstart pipeline is run once (by the schedlab binary named in SCHEDLAB_BIN) into a
temporary data directory, repeated so every table has more than one partition; each notebook
then runs top to bottom with SCHEDLAB_DATA pointing there.
"""

import os
import subprocess
from pathlib import Path

import datafusion
import duckdb
import nbformat
import polars as pl
import pyarrow.parquet as pq
import pytest
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Two runs: with one, a run id taken from the wrong partition could not show.
REPEAT = 2

# The tables whose columns may differ between runs (turbostat prints the counters each machine
# has): DuckDB reads them with union_by_name, polars by concatenating the partitions diagonally,
# because a polars scan of the directory refuses a column its first file lacks.
VARYING_COLUMNS = {"turbostat"}


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    binary = os.environ.get("SCHEDLAB_BIN", str(ROOT / "target" / "debug" / "schedlab"))
    subprocess.run(
        [binary, "run", str(ROOT / "pipelines" / "quickstart.yaml"), "--data", str(data),
         "--repeat", str(REPEAT)],
        check=True,
        cwd=ROOT,
    )
    return data


@pytest.fixture(scope="session")
def pipeline_dir(data_dir):
    return data_dir / "quickstart"


# Seed 002's workflow in small: the same fixed work under two labels, three runs each.
LABELLED = """\
name: labelled
repeat: 3
collect:
  workloads:
    spin:
      run: [stress-ng, --cpu, "1", --cpu-method, int64, --cpu-ops, "200", --metrics-brief]
      parse: stress-ng
aggregate:
  - cpu_time: {}
"""


@pytest.fixture(scope="session")
def labelled_data_dir(tmp_path_factory):
    """Runs of LABELLED under labels a and b, compared by label."""
    data = tmp_path_factory.mktemp("labelled")
    pipeline = data / "labelled.yaml"
    pipeline.write_text(LABELLED)
    binary = os.environ.get("SCHEDLAB_BIN", str(ROOT / "target" / "debug" / "schedlab"))
    for label in ("a", "b"):
        subprocess.run([binary, "run", str(pipeline), "--data", str(data), "--label", label],
                       check=True, cwd=ROOT)
    subprocess.run([binary, "compare", str(pipeline), "--data", str(data), "--by", "label"],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return data


# What each notebook reads: a data directory fixture and the pipeline in it.
NOTEBOOK_DATA = {"quickstart.ipynb": ("data_dir", "quickstart"),
                 "compare.ipynb": ("labelled_data_dir", "labelled")}


def test_every_notebook_has_its_data():
    assert sorted(NOTEBOOK_DATA) == sorted(p.name for p in HERE.glob("*.ipynb"))


@pytest.mark.parametrize("notebook", sorted(HERE.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(notebook, request, monkeypatch):
    fixture, pipeline = NOTEBOOK_DATA[notebook.name]
    monkeypatch.setenv("SCHEDLAB_DATA", str(request.getfixturevalue(fixture)))
    monkeypatch.setenv("SCHEDLAB_PIPELINE", pipeline)
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]


def run_ids(pipeline):
    """The complete runs: directories under runs/ without a dot (`<run>.partial` is not one)."""
    return {p.name for p in (pipeline / "runs").iterdir() if p.is_dir() and "." not in p.name}


def datasets(pipeline):
    """Every table and aggregate directory (a hidden one would be a writer's staging)."""
    return [d for kind in ("tables", "aggregates") for d in sorted((pipeline / kind).iterdir())
            if d.is_dir() and not d.name.startswith(".")]


def duckdb_scan(dataset, **options):
    """DuckDB's read_parquet over a table's partitions, with `options` (e.g. hive_partitioning)."""
    if dataset.name in VARYING_COLUMNS:
        options["union_by_name"] = True
    settings = "".join(f", {name} = {str(value).lower()}" for name, value in options.items())
    return f"read_parquet('{dataset}/*/*.parquet'{settings})"


def duckdb_rows_per_run(dataset):
    scan = duckdb_scan(dataset, hive_partitioning=True)
    return dict(duckdb.sql(f"SELECT run_id, count(*) FROM {scan} GROUP BY run_id").fetchall())


def polars_rows_per_run(dataset):
    if dataset.name in VARYING_COLUMNS:
        frame = pl.concat([pl.scan_parquet(f) for f in sorted(dataset.glob("*/*.parquet"))],
                          how="diagonal")
    else:
        frame = pl.scan_parquet(dataset, hive_partitioning=True)
    return dict(frame.group_by("run_id").len().collect().rows())


def datafusion_rows_per_run_of(ctx):
    """Rows per run of the table registered in `ctx` as `dataset`."""
    rows = ctx.sql("SELECT run_id, count(*) AS n FROM dataset GROUP BY run_id").to_pylist()
    return {row["run_id"]: row["n"] for row in rows}


def datafusion_rows_per_run(dataset):
    # A listing table over the directory; its run_id is the files' column (declaring it again
    # as a partition column is an error: the name would be there twice).
    ctx = datafusion.SessionContext()
    ctx.register_parquet("dataset", str(dataset))
    return datafusion_rows_per_run_of(ctx)


def datafusion_sql_rows_per_run(dataset):
    # The same in SQL alone (as in datafusion-cli): CREATE EXTERNAL TABLE would take run_id from
    # the path as well, a duplicate, unless told not to infer partitions.
    ctx = datafusion.SessionContext()
    ctx.sql("SET datafusion.execution.listing_table_factory_infer_partitions = false").collect()
    ctx.sql(f"CREATE EXTERNAL TABLE dataset STORED AS PARQUET LOCATION '{dataset}/'").collect()
    return datafusion_rows_per_run_of(ctx)


ENGINES = {
    "duckdb": duckdb_rows_per_run,
    "polars": polars_rows_per_run,
    "datafusion": datafusion_rows_per_run,
    "datafusion-sql": datafusion_sql_rows_per_run,
}


def footer_rows_per_run(dataset):
    """Each partition's rows as its files' footers count them: no engine involved."""
    return {
        partition.name.removeprefix("run_id="): sum(pq.read_metadata(f).num_rows
                                                   for f in partition.glob("*.parquet"))
        for partition in dataset.iterdir()
    }


def test_the_run_ids_of_every_engine_are_the_run_directories(pipeline_dir):
    runs = run_ids(pipeline_dir)
    assert len(runs) == REPEAT
    # The runs table has one row per run, so every run shows up in it.
    for engine, rows_per_run in ENGINES.items():
        assert set(rows_per_run(pipeline_dir / "tables" / "runs")) == runs, engine


def test_every_table_and_aggregate_has_one_partition_per_run(pipeline_dir):
    partitions = {f"run_id={run}" for run in run_ids(pipeline_dir)}
    found = datasets(pipeline_dir)
    assert {d.parent.name for d in found} == {"tables", "aggregates"}
    for dataset in found:
        assert {p.name for p in dataset.iterdir()} == partitions, dataset
        for partition in dataset.iterdir():
            assert list(partition.glob("*.parquet")), f"{partition} has no Parquet file"


def test_each_file_holds_its_partitions_run_id(pipeline_dir):
    for dataset in datasets(pipeline_dir):
        # Without hive_partitioning, run_id is the file's own column.
        scan = duckdb_scan(dataset, hive_partitioning=False, filename=True)
        strays = duckdb.sql(f"""
            SELECT DISTINCT run_id, filename FROM {scan}
            WHERE NOT contains(filename, '/run_id=' || run_id || '/')
        """).fetchall()
        assert not strays, f"{dataset}: {strays}"


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_per_run_agree_among_engines(engine, pipeline_dir):
    """Each engine counts, per run, the rows the partition's own files hold: so all agree."""
    rows_per_run = ENGINES[engine]
    footers = {dataset: footer_rows_per_run(dataset) for dataset in datasets(pipeline_dir)}
    # Something to count in every run (the placement samples at least).
    assert any(all(footers[d].values()) for d in footers)
    for dataset, expected in footers.items():
        counted = rows_per_run(dataset)
        # An empty partition is no group in a GROUP BY: count it as zero rows.
        assert {run: counted.get(run, 0) for run in expected} == expected, dataset
        assert set(counted) <= set(expected), dataset
