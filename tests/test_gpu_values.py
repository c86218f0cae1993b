"""GPU values checked (issue 9, item 7): negative, infinite or missing durations in the text
and CSV importers are skipped with their reason, never summed, and the line counts add up
(lines_total = parsed + other + skipped).  The SQLite importers: test_gpu_hostile_sqlite.py."""
from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "gpu"


def head(name: str, n: int) -> str:
    return "".join((SAMPLES / name).read_text().splitlines(keepends=True)[:n])


def dict_line(duration: str) -> str:
    return head("pyprof_net.dict", 1).replace("'kDuration': 30000", f"'kDuration': {duration}")


CASES = [  # file name, content, table, column, reasons of the skipped lines
    ("ncu_neg.csv", head("ncu_raw.csv", 3) + '"1","7011","python3","host","kneg","1","7","(128, 1, 1)",'
     '"(64, 1, 1)","0","8.0","-4,032","12.50","262,144"\n', "gpu_kernels", "duration_ns",
     ["negative gpu__time_duration.sum"]),
    ("nsys_cuda_gpu_kern_sum_neg.csv", head("nsys_stats_cuda_gpu_kern_sum.csv", 2)
     + '13.8,-16000,2,8000.0,8000.0,4000,12000,5656.9,"kneg"\n', "gpu_report_rows", "total_ns",
     ["negative total time"]),
    ("nsys_cuda_gpu_trace_neg.csv", head("nsys_stats_cuda_gpu_trace.csv", 2)
     + '50000,-3000,103,8,4,1,128,1,1,32,0.001,0.000,,,,,Sample GPU (0),1,7,"kneg"\n', "gpu_memops", "duration_ns",
     ["negative duration"]),
    ("nvprof_neg.csv", head("nvprof_gpu_trace_cuda10.csv", 5)
     + '1.0,-2.5,1,1,1,1,1,1,8,0,0,,,,,"Dev (0)",1,7,"kern(int)",5\n'
     + '3.0,1.0,1,1,1,1,1,1,8,0,0,,,,,"Dev (0)",1,7,"kern(int)",6\n', "gpu_kernels", "duration_ns",
     ["negative duration"]),
    ("pyprof_neg.csv", head("pyprof_prof.csv", 2) + '"2","fprop","0","m","relu","k2","x","-400","1,1,1","1,1,1","1","1"\n'
     + '"3","fprop","0","m","relu","k3","x","inf","1,1,1","1,1,1","1","1"\n', "gpu_kernels", "duration_ns",
     ["negative Sil(ns)", "Sil(ns) is not a finite number"]),
    ("pyprof_neg.dict", head("pyprof_net.dict", 1) + dict_line("-30000") + dict_line("1e999"), "gpu_kernels",
     "duration_ns", ["negative kDuration", "kDuration is not a finite number"]),
]


@pytest.mark.parametrize("name, text, table, column, reasons", CASES, ids=[c[0] for c in CASES])
def test_bad_durations_are_skipped_not_summed(tmp_path, cli, tmp_db, query, name, text, table, column, reasons):
    path = tmp_path / name
    path.write_text(text)
    res = cli("ingest", "--db", tmp_db, path)
    assert res.exit_code == 0, res.output
    assert query(f"SELECT count(*) FROM {table} WHERE {column} < 0")[0][0] == 0
    skipped = [r[0] for r in query("SELECT reason FROM skipped_lines ORDER BY line_no")]
    assert len(skipped) == len(reasons) and all(want in got for want, got in zip(reasons, skipped)), skipped
    total, parsed, other, n_skipped = query(
        "SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources")[0]
    assert n_skipped == len(reasons) and total == parsed + other + n_skipped and parsed >= 1


def test_nsys_nvtx_trace_row_without_start_or_ending_before_it(tmp_path, cli, tmp_db, query):
    path = tmp_path / "report_nvtx_pushpop_trace.csv"
    path.write_text("Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,"
                    "RangeId,ParentId,RangeStack,NameTree\n"
                    "100,200,100,0,100,good,1,1,0,0,1,,:1,good\n"
                    ",200,100,0,100,nostart,1,1,0,0,2,,:2,nostart\n"
                    "300,250,,0,0,backwards,1,1,0,0,3,,:3,backwards\n")
    res = cli("ingest", "--db", tmp_db, path)
    assert res.exit_code == 0, res.output
    assert query("SELECT text FROM nvtx_ranges") == [("good",)]
    reasons = [r[0] for r in query("SELECT reason FROM skipped_lines ORDER BY line_no")]
    assert "no start time" in reasons[0] and "end before start" in reasons[1]
    assert query("SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources") == [(4, 1, 1, 2)]
