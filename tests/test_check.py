"""check: verdict rules, the significance gate, policy options and TOML overrides, exit codes."""
from __future__ import annotations

import pandas as pd
import pytest

from compare_helpers import SAMPLES, ingest_run, perturb
from conftest import invoke_cli
from loganalyze.compare import check, compare
from loganalyze.compare.policy import Policy, PolicyError, PolicySet, load_policy


def _samples(spec: dict[str, list[int]]) -> pd.DataFrame:
    rows = [{"family": "onednn", "item": item, "stratum": item, "run": "r", "ns": ns}
            for item, values in spec.items() for ns in values]
    frame = pd.DataFrame(rows, columns=["family", "item", "stratum", "run", "ns"])
    frame["ns"] = frame["ns"].astype("int64")
    frame["seq"] = frame.groupby(["item", "stratum"]).cumcount() + 1
    return frame


def _verdicts(base: dict, cand: dict, **policy) -> dict[str, tuple]:
    table = check.verdicts(compare.build(_samples(base), _samples(cand)), PolicySet(Policy(**policy)))
    return {r.item: (r.verdict, r.reason) for r in table.itertuples()}


def test_thresholds():
    got = _verdicts({"a": [1000], "b": [1000], "c": [1000], "d": [1000]},
                    {"a": [1120], "b": [1060], "c": [1020], "d": [700]})
    assert got["a"][0] == "fail" and got["b"][0] == "warn" and got["c"][0] == "pass"
    assert got["d"] == ("improved", "faster")


def test_improvement_never_fails_and_new_vanished_do_not_fail():
    got = _verdicts({"a": [5000] * 20, "gone": [10]}, {"a": [100] * 20, "new": [99999]})
    assert got["a"][0] == "improved" and got["gone"][0] == "vanished" and got["new"][0] == "new"
    table = check.verdicts(compare.build(_samples({"gone": [1]}), _samples({"new": [1]})))
    assert check.overall(table) == "pass" and check.exit_code("pass") == 0


def test_noise_floor_and_min_count():
    assert _verdicts({"a": [100]}, {"a": [140]}, min_delta_us=0.05)["a"][0] == "pass"
    assert _verdicts({"a": [100]}, {"a": [140]}, min_delta_us=0.0)["a"][0] == "fail"
    assert _verdicts({"a": [1000] * 2}, {"a": [2000] * 2}, min_count=3)["a"][0] == "pass"


def test_significance_gate_turns_noise_into_a_warning():
    base = [1000, 3000] * 10          # bimodal calls of one stratum
    cand = [1000] * 9 + [3000] * 11   # one call moved to the slow mode: mean +10%
    verdict, reason = _verdicts({"a": base}, {"a": cand})["a"]
    assert verdict == "warn" and "not significant" in reason
    verdict, reason = _verdicts({"a": base}, {"a": [int(v * 1.3) for v in base]})["a"]
    assert verdict == "fail" and "significant (p=" in reason


def test_stratified_test_sees_a_uniform_slowdown_of_mixed_calls():
    base = _samples({"a": []})
    rows = [{"family": "onednn", "item": "a", "stratum": f"s{i}", "run": "r", "ns": 10 ** (i % 4 + 2) + i, "seq": 1}
            for i in range(24)]
    base = pd.DataFrame(rows)
    cand = base.assign(ns=(base["ns"] * 13 // 10).astype("int64"))
    table = check.verdicts(compare.build(base, cand))
    assert table.iloc[0]["verdict"] == "fail" and table.iloc[0]["p_value"] < 0.05


def test_policy_file_and_overrides(tmp_path):
    path = tmp_path / "loganalyze.toml"
    path.write_text('[check]\nfail = "20%"\nwarn = "8%"\nmin_count = 2\n\n'
                    '[[check.override]]\nmatch = "onednn:conv*"\nfail = "50%"\n\n'
                    '[[check.override]]\nmatch = "onednn:reorder"\nignore = true\n', encoding="utf-8")
    policies = load_policy(str(path), warn_pct="6%")
    assert policies.base.fail_pct == 20 and policies.base.warn_pct == 6 and policies.base.min_count == 2
    assert policies.for_item("onednn", "convolution").fail_pct == 50
    assert policies.for_item("onednn", "reorder").ignore
    assert policies.for_item("kernel", "convolution").fail_pct == 20
    base = _samples({"convolution": [1000] * 3, "reorder": [1000] * 3, "pool": [1000] * 3})
    cand = _samples({"convolution": [1300] * 3, "reorder": [9000] * 3, "pool": [1300] * 3})
    table = check.verdicts(compare.build(base, cand), policies)
    got = dict(zip(table["item"], table["verdict"]))
    assert got == {"convolution": "warn", "reorder": "ignored", "pool": "fail"}


@pytest.mark.parametrize("text,msg", [
    ("[check]\nfail = \"ten\"\n", "expected a percentage"),
    ("[check]\nbogus = 1\n", "unknown setting"),
    ("[check\n", "not valid TOML"),
    ("[[check.override]]\nfail = \"5%\"\n", "needs match"),
    ("[check]\nwarn = \"20%\"\n", "above --fail"),
])
def test_bad_policy_files(tmp_path, text, msg):
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError, match=msg):
        load_policy(str(path))


LOG = SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz"


def _two_runs(tmp_path, factor: float, labels: tuple[str, str]) -> str:
    """A database with LOG as run labels[0] and LOG with convolution slowed as labels[1]."""
    slow = tmp_path / "slow.log"
    perturb(LOG, slow, slow="convolution", factor=factor)
    db = str(tmp_path / "runs.duckdb")
    ingest_run(db, labels[0], LOG)
    ingest_run(db, labels[1], slow)
    return db


def test_cli_exit_codes_and_options(tmp_path):
    db = _two_runs(tmp_path, 1.08, ("base", "cand"))
    r = invoke_cli("check", "base", "cand", "--db", db)
    assert r.exit_code == 0 and "WARN" in r.stdout, r.output
    r = invoke_cli("check", "base", "cand", "--db", db, "--fail", "7%")  # all 8 calls 8% slower: significant
    assert r.exit_code == 1 and "significant (p=0.00391)" in r.stdout, r.output
    strict = ("check", "base", "cand", "--db", db, "--fail", "7%", "--alpha", "1")
    r = invoke_cli(*strict)
    assert r.exit_code == 1 and "FAIL" in r.stdout
    assert invoke_cli(*strict, "--min-delta-us", "100").exit_code == 0
    assert invoke_cli(*strict, "--min-count", "9").exit_code == 0
    assert invoke_cli(*strict, "--statistic", "median").exit_code == 1
    assert invoke_cli("check", "base", "cand", "--db", db, "--fail", "x").exit_code == 2
    assert invoke_cli("check", "base", "cand", "--db", db, "--policy", str(tmp_path / "none.toml")).exit_code == 2
    assert invoke_cli("check", "base", "nosuch", "--db", db).exit_code == 2
    assert invoke_cli("check", "base", str(tmp_path / "missing.log"), "--db", db).exit_code == 2
    r = invoke_cli("check", "base", "cand", "--db", db, "--markdown", "-", "--json", "-")
    assert r.exit_code == 2 and "only one report" in r.stderr


def test_check_records_the_verdict_for_last_good(tmp_path):
    db = _two_runs(tmp_path, 1.5, ("n1", "n2"))
    assert invoke_cli("check", "@previous", "n2", "--db", db).exit_code == 1
    ingest_run(db, "n3", SAMPLES / "onednn" / "torch2.13_onednn_v3_exec.log")
    r = invoke_cli("check", "@last-good", "n3", "--db", db, "--json", "-")
    assert r.json()["baseline"]["label"] == "n1"
    import duckdb

    from loganalyze import runmeta

    con = duckdb.connect(db, read_only=True)
    runs = runmeta.runs_table(con).astype(object).where(lambda f: f.notna(), None).to_dict("records")
    con.close()
    assert [(x["run_label"], x["verdict"], x["checked_against"]) for x in runs] == [
        ("n1", None, None), ("n2", "fail", "n1"), ("n3", "pass", "n1")]
    r = invoke_cli("check", "@last-good", "n3", "--db", db, "--no-record")
    assert r.exit_code == 0


def test_a_side_with_nothing_to_compare_is_an_input_error(tmp_path):
    table_only = SAMPLES / "trace" / "torch2.13_key_averages.txt"  # aggregate tables only: no calls
    r = invoke_cli("check", str(LOG), str(table_only))
    assert r.exit_code == 2 and "nothing to compare" in r.stderr and "torch2.13_key_averages.txt" in r.stderr
    r = invoke_cli("compare", str(LOG), str(LOG), "--family", "nvtx")
    assert r.exit_code == 2 and "no NVTX ranges" in r.stderr
