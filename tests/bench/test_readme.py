"""bench/readme.py: the README's generated table of benchmarks, rendered from a sample summary
(no benchmark runs here), and the README's markers it writes between."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import bench_module

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).with_name("summary_sample.jsonl")


readme = bench_module("readme")


def test_the_table_has_every_figure_beside_its_baseline_ratio_load_and_steal():
    run, rows = readme.read(SAMPLE)
    block = readme.render(run, rows)
    lines = block.splitlines()
    assert (
        "Generated from `DATABASE_URL=postgres://… make bench` run on 2026-12-01 02:10 UTC on "
        "python-svc (2 CPUs, Python 3.11.7); databases: SQLite 3.40.1, PostgreSQL 15.20; "
        "load average 2.1 to 7.9 while the figures were taken (each row's own below); the "
        "hypervisor took 8% of the machine's CPU time over the run (steal; each row's since the "
        "row before)." in block
    )
    assert "Failed in that run (no figures): bench/feed.py." in lines
    table = [line for line in lines if line.startswith("| ")]
    assert table[0] == (
        "| benchmark | figure | unit | in-run baseline | ratio | load | steal | note |"
    )
    assert table[1:] == [
        "| log: rebuild_projections, 1,000,000 events of mixed play, PostgreSQL | 14,568 "
        "| events/s | 15,798 | 0.92 | 3.4 | 5% | baseline: reading the rows (target ≥ 20,000/s, "
        "ratio ≥ 0.5) |",
        # Recorded at the same moment as the row before (no tick between): its stretch.
        "| log: rebuild_projections per CPU-second, PostgreSQL | 12,000 | events/s | 14,000 "
        "| 0.86 | 3.4 | 5% | recorded with the row before |",
        "| check path: SQL statements per check (incl. BEGIN/COMMIT) | 10.0 | statements "
        "| 5.00 | 2.00 | 2.1 | — | baseline: the floor |",  # a row without the counters
        # Its steal is counted from the last row that had the counters: 200 of 2,000 ticks.
        "| api: p99 at half that rate, PostgreSQL, 2 workers | 88.2 | ms | — | — | 7.9 | 10% "
        "| target 50 ms |",
    ]


def test_only_what_lies_between_the_markers_is_replaced(tmp_path):
    page = tmp_path / "README.md"
    page.write_text(
        f"# Title\n\nProse before.\n\n{readme.BEGIN}\nold table\n{readme.END}\n\nProse after.\n"
    )
    readme.write(SAMPLE, page)
    once = page.read_text()
    assert once.startswith("# Title\n\nProse before.\n\n" + readme.BEGIN + "\n")
    assert once.endswith(readme.END + "\n\nProse after.\n")
    assert "old table" not in once
    assert "| log: rebuild_projections" in once
    readme.write(SAMPLE, page)
    assert page.read_text() == once  # regenerating replaces, never appends


def test_a_page_without_its_markers_is_refused():
    with pytest.raises(ValueError, match="bench:begin"):
        readme.replace("# no markers here\n", "table")


def test_the_readme_has_the_markers_in_its_performance_section():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(readme.BEGIN) == 1 and text.count(readme.END) == 1
    performance = text.index("\n## Performance\n")
    following = text.find("\n## ", performance + 1)
    assert performance < text.index(readme.BEGIN) < text.index(readme.END) < following


def test_each_recorded_figure_carries_the_machines_cpu_counters(tmp_path, monkeypatch):
    summary = bench_module("summary")
    path = tmp_path / "summary.jsonl"
    monkeypatch.setenv("BENCH_SUMMARY", str(path))
    summary.record("a: first", 1.0, "ms", 2.0)
    sum(range(2_000_000))  # some CPU time between the two
    summary.record("a: second", 1.0, "ms", 2.0)
    _, rows = readme.read(path)
    first, second = (row["cpu"] for row in rows)
    assert all(isinstance(value, int) for value in first + second)
    assert 0 <= first[0] <= first[1] < second[1] and first[0] <= second[0]


def test_a_figure_recorded_a_moment_after_the_one_before_has_its_steal():
    # check_path.py records its 14 rows at once: a tick apart, one of them a steal tick, and the
    # rows after the first read "100%" of steal, on a run whose steal was 2%.
    run = {"cpus": 2, "cpu": [0, 0]}
    rows = [{"cpu": [10, 1000]}, {"cpu": [11, 1001]}, {"cpu": [11, 1002]}, {"cpu": [60, 2000]}]
    # The last: counted from the first row's counters (the two after it were recorded with it).
    assert readme.stolen_shares(run, rows) == [0.01, 0.01, 0.01, 50 / 1000]


def test_a_row_without_counters_does_not_take_the_steal_from_the_rows_after_it():
    run = {"cpus": 2, "cpu": [0, 0]}
    rows = [{"cpu": [10, 1000]}, {}, {"cpu": [11, 1001]}]
    assert readme.stolen_shares(run, rows) == [0.01, None, 0.01]
