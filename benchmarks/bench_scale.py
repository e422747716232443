"""Benchmark: counting response files where they lie, against raw DuckDB GROUP BYs.

Generates ``--rows`` long-format responses (respondent_id, question_id, answer; four
questions per respondent) as a CSV and as a Parquet file in a temporary directory, then:

1. times, in this process and interleaved (median and best of ``--repeats``, wall and CPU):
   * raw DuckDB: ``SELECT question_id, answer, count(*) ... GROUP BY ALL`` on the file;
   * raw DuckDB with respondents: the same and a GROUP BY respondent_id in one scan
     (streamed to both GROUP BYs on DuckDB 2, else GROUPING SETS), the least an exact
     count needs (the store's ``missing`` counts distinct respondents, and a respondent
     answering a question twice must be found);
   * surveykit ``count_files`` with DuckDB (the importer's checks, duplicate detection,
     missing), on the CSV and on the Parquet file;
   * surveykit ``count_files`` with Dask on a ``LocalCluster`` of ``--workers`` worker
     processes (one thread each), on the same files;
2. prints the ratios (goal for the CSV: surveykit <= 1.5x the raw GROUP BY);
3. measures the peak memory (VmHWM) of each, each in a fresh process (Dask: the client
   and the largest worker).

Usage::

    python benchmarks/bench_scale.py                      # 10,000,000 rows
    python benchmarks/bench_scale.py --rows 1000000 --no-dask

This is a script, not a test: timings depend on the machine (and on what else runs on it).
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
SURVEY = ('name = "bench"\ntitle = "Benchmark survey"\n[mechanism]\np = 0.6\nq = 0.2\n'
          + "".join(f'[[questions]]\nid = "{q}"\ntext = "Question {q}?"\n' for q in QUESTIONS))


def write_files(workdir: Path, rows: int) -> tuple[Path, Path]:
    """The CSV and Parquet files (made by DuckDB: fast, and not what is measured)."""
    import duckdb

    csv_path, parquet_path = workdir / "responses.csv", workdir / "responses.parquet"
    questions = ", ".join(f"'{q}'" for q in QUESTIONS)
    with duckdb.connect() as con:
        con.execute(f"""COPY (SELECT printf('R%08d', i // 4) AS respondent_id,
                                     [{questions}][(i % 4 + 1)::BIGINT] AS question_id,
                                     ['yes', 'no', 'dont_know'][(hash(i) % 3 + 1)::BIGINT]
                                         AS answer
                              FROM range({rows}) t(i)) TO '{csv_path}' (HEADER)""")
        con.execute(f"COPY (SELECT * FROM read_csv('{csv_path}', all_varchar = true)) "
                    f"TO '{parquet_path}' (FORMAT parquet)")
    return csv_path, parquet_path


def reader(path: Path) -> str:
    return f"read_parquet('{path}')" if path.suffix == ".parquet" else f"read_csv('{path}')"


def raw_group_by(path: Path) -> int:
    import duckdb

    with duckdb.connect() as con:
        rows = con.execute(f"SELECT question_id, answer, count(*) FROM {reader(path)} "
                           "GROUP BY ALL").fetchall()
    return sum(n for *_, n in rows)


def raw_with_respondents(path: Path) -> int:
    """Counts and distinct respondents in one scan: the least work an exact count needs
    (on DuckDB 2 the scan streamed to two GROUP BYs, its fastest form; else GROUPING SETS)."""
    import duckdb

    with duckdb.connect() as con:
        if int(duckdb.__version__.split(".")[0]) >= 2:
            rows = con.execute(
                f"WITH t AS MATERIALIZED (SELECT * FROM {reader(path)}) "
                "SELECT 1, question_id, answer, count(*) FROM t GROUP BY ALL UNION ALL "
                "SELECT 0, NULL, NULL, count(*) FROM (SELECT respondent_id FROM t "
                "GROUP BY ALL)").fetchall()
        else:
            rows = con.execute(
                "SELECT GROUPING(respondent_id) AS by_cell, question_id, answer, count(*) "
                f"FROM {reader(path)} GROUP BY GROUPING SETS ((question_id, answer), "
                "(respondent_id))").fetchall()
    return sum(n for by_cell, *_, n in rows if by_cell)


def surveykit_counts(path: Path, engine: str = "duckdb", scheduler: str | None = None) -> int:
    from surveykit.counting import count_files
    from surveykit.definition.survey import parse_survey

    counts = count_files(parse_survey(SURVEY, "bench"), [path], engine=engine,
                         scheduler=scheduler)
    return sum(question.answered for question in counts)


def peak_mb() -> float:
    """This process's peak resident memory in MB.

    On Linux VmHWM, not ru_maxrss: a process started by fork and exec inherits
    its parent's ru_maxrss, so a fresh process would report the benchmark's own peak.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _child(task: str, path: str, scheduler: str | None, out) -> None:
    function = {"raw": raw_group_by, "raw+respondents": raw_with_respondents,
                "surveykit": surveykit_counts}[task]
    start = time.perf_counter()
    if scheduler is not None:
        function(Path(path), "dask", scheduler)
    else:
        function(Path(path))
    out.send((time.perf_counter() - start, peak_mb()))


def in_fresh_process(task: str, path: Path, scheduler: str | None = None) -> tuple[float, float]:
    """(seconds, peak MB) of one run in a new process."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(task, str(path), scheduler, send))
    process.start()
    result = receive.recv()
    process.join()
    return result


def best(repeats: int, function, *args) -> tuple[float, object]:
    fastest, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, result


def warm_up(workdir: Path) -> None:
    """Import everything and run each function once on a small file (imports cost seconds)."""
    small = workdir / "small"
    small.mkdir()
    csv_path, _ = write_files(small, 1000)
    for function in (raw_group_by, raw_with_respondents, surveykit_counts):
        function(csv_path)


def measure(path: Path, repeats: int) -> dict[str, float]:
    """Median seconds of each (and best, CPU), runs interleaved so that a busy moment hits
    all alike. CPU seconds (all of DuckDB's threads) move less than wall seconds when
    other work shares the machine."""
    names = ("raw", "raw+respondents", "surveykit")
    functions = (raw_group_by, raw_with_respondents, surveykit_counts)
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    answers = {}
    for _ in range(repeats):
        for name, function in zip(names, functions, strict=True):
            start, start_cpu = time.perf_counter(), time.process_time()
            answers[name] = function(path)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    assert len(set(answers.values())) == 1, answers
    pairs = [ours / raw for ours, raw in zip(wall["surveykit"], wall["raw+respondents"],
                                             strict=True)]
    times = {name: statistics.median(wall[name]) for name in names}
    times.update({f"{name} best": min(wall[name]) for name in names})
    times.update({f"{name} cpu": statistics.median(cpu[name]) for name in names})
    times.update({"pairs low": min(pairs), "pairs high": max(pairs)})
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=4, help="Dask worker processes")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="surveykit-bench-scale-") as tmp:
        start = time.perf_counter()
        csv_path, parquet_path = write_files(Path(tmp), args.rows)
        print(f"wrote {args.rows:,} rows: CSV {csv_path.stat().st_size / 1e6:.0f} MB, Parquet "
              f"{parquet_path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - start:.1f} s")
        warm_up(Path(tmp))
        timings = {}
        for kind, path in (("CSV", csv_path), ("Parquet", parquet_path)):
            t = timings[kind] = measure(path, args.repeats)
            print(f"\n{kind} ({args.rows:,} rows), median of {args.repeats} (best; CPU):")
            for name, label in (("raw", "raw DuckDB GROUP BY                "),
                                ("raw+respondents", "raw GROUP BY + distinct respondents"),
                                ("surveykit", "surveykit count_files (DuckDB)     ")):
                print(f"  {label} {t[name]:7.2f} s ({t[name + ' best']:.2f}; "
                      f"CPU {t[name + ' cpu']:.2f} s)")
            print(f"  ratio {t['surveykit'] / t['raw']:.2f}x the raw GROUP BY "
                  f"(CPU {t['surveykit cpu'] / t['raw cpu']:.2f}x); "
                  f"{t['surveykit'] / t['raw+respondents']:.2f}x raw + respondents "
                  f"(CPU {t['surveykit cpu'] / t['raw+respondents cpu']:.2f}x; pairs "
                  f"{t['pairs low']:.2f}-{t['pairs high']:.2f}x), goal <= 1.3x (issue 25)")
        print("\npeak memory (VmHWM, each in a fresh process):")
        for kind, path in (("CSV", csv_path), ("Parquet", parquet_path)):
            for task in ("raw", "surveykit"):
                _, peak = in_fresh_process(task, path)
                print(f"  {kind:8s} {task:10s} {peak:7.0f} MB")
        if args.no_dask:
            return
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            print(f"\nDask, LocalCluster of {args.workers} worker processes (1 thread each):")
            surveykit_counts(csv_path.parent / "small" / "responses.csv", "dask",
                             cluster.scheduler_address)  # warm the workers' imports
            for kind, path in (("CSV", csv_path), ("Parquet", parquet_path)):
                elapsed, _ = best(args.repeats, surveykit_counts, path, "dask",
                                  cluster.scheduler_address)
                seconds, client_peak = in_fresh_process("surveykit", path,
                                                        cluster.scheduler_address)
                worker_peak = max(client.run(peak_mb).values())
                duck = timings[kind]["surveykit"]
                print(f"  {kind:8s} {elapsed:7.2f} s  ({elapsed / duck:.2f}x DuckDB's "
                      f"{duck:.2f} s); peak memory: client {client_peak:.0f} MB, "
                      f"largest worker {worker_peak:.0f} MB")


if __name__ == "__main__":
    main()
