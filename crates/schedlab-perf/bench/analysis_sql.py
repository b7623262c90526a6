"""DuckDB's side of the analysis bench: residency and scheduling delay per workload thread and CPU,
as SQL over one run's sched_slices partition, the figures schedlab's aggregate stage computes.

Usage: analysis_sql.py TABLES AGGREGATES RUN_ID RUNS

Prints the best wall time in seconds of the two queries together over RUNS runs (DuckDB's
import and connection are not counted: the aggregate stage is compared with the queries), then
how many threads' wakeup counts and maximum delays agree with schedlab's sched_delay aggregate,
which the bench shows beside it so that the two sides are known to compute the same figures.
"""

import sys
import time

import duckdb

tables, aggregates, run, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
slices = f"{tables}/sched_slices/run_id={run}/*.parquet"

RESIDENCY = f"""
    SELECT tid, cpu, sum(run_ns) AS run_ns, count(*) AS slices
    FROM read_parquet('{slices}') WHERE workload IS NOT NULL GROUP BY tid, cpu
"""
SCHED_DELAY = f"""
    SELECT tid, count(*) AS wakeups, avg(sched_delay_ns) AS mean_ns,
           quantile_disc(sched_delay_ns, 0.99) AS p99_ns, max(sched_delay_ns) AS max_ns
    FROM read_parquet('{slices}') WHERE workload IS NOT NULL AND sched_delay_ns > 0 GROUP BY tid
"""

con = duckdb.connect()
best = None
for _ in range(runs):
    start = time.perf_counter()
    con.execute(RESIDENCY).fetchall()
    delays = con.execute(SCHED_DELAY).fetchall()
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)

ours = con.execute(
    f"SELECT tid, wakeups, max_ns FROM read_parquet('{aggregates}/sched_delay/run_id={run}/*.parquet')"
).fetchall()
theirs = {tid: (wakeups, max_ns) for tid, wakeups, _, _, max_ns in delays}
agree = sum(1 for tid, wakeups, max_ns in ours if theirs.get(tid, (0, None)) == (wakeups, max_ns))
print(f"{best:.4f} {agree} {len(ours)}")
