"""check on copies of real logs: one item made 30% slower fails (exit 1) naming that item and
nothing else; the unchanged copy and a copy with ±3% noise on every record pass (exit 0)."""
from __future__ import annotations

import json

import pytest

from compare_helpers import SAMPLES, perturb
from conftest import CORPUS, invoke_cli

ONEDNN = [
    (SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz", "convolution"),
    (SAMPLES / "onednn" / "torch2.13_onednn_v3_exec.log", "reorder"),
    (SAMPLES / "onednn" / "mkldnn_v0_style.log", "eltwise"),
    (SAMPLES / "onednn" / "dnnl_v2_timestamps_style.log", "matmul"),
]
CORPUS_ONEDNN = [
    ("onednn_verbose/dnnl_v1.7_create_cache_miss_dlprof_readme.log", "reorder"),
    ("onednn_verbose/mixed_mkldnn_v0_dnnl_v1_pinzhenx_readme.log", "convolution"),
    ("onednn_verbose/onednn_v3.2_check_dispatch_timestamp_doc_verbose.log", "convolution"),
    ("onednn_verbose/mkldnn_v0.18_benchdnn_doc_perf_profile.log", "reorder"),
]
TRACES = [
    (SAMPLES / "trace" / "torch2.13_cpu_train.pt.trace.json.gz", "aten::addmm"),
    (SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json", "aten::linear"),
    (SAMPLES / "trace" / "mxnet_style_profile.json", None),
]
GPU = [
    (SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite", "gemm_kernel"),
    (SAMPLES / "gpu" / "nsys_2022_pytorch.sqlite", "elementwise_kernel"),
    (SAMPLES / "gpu" / "nvprof_markers.nvvp", None),
]


def _json_check(*args):
    r = invoke_cli("check", *args, "--json", "-")
    return r.exit_code, (json.loads(r.stdout) if r.stdout.strip() else None), r


def _planted(tmp_path, src, slow):
    name = src.name
    slowed = tmp_path / f"slow_{name}"
    noisy = tmp_path / f"noise_{name}"
    copy = tmp_path / f"copy_{name}"
    if slow is None:  # any item with a name: the first one of its family
        return None
    assert perturb(src, slowed, slow=slow, factor=1.3) > 0
    perturb(src, noisy, noise=0.03, seed=11)
    perturb(src, copy)  # factor 1, no noise: same values, written back by the helper
    return slowed, noisy, copy


def _assert_planted(tmp_path, src, slow, family):
    slowed, noisy, copy = _planted(tmp_path, src, slow)
    code, doc, r = _json_check(str(src), str(slowed))
    assert code == 1, r.output
    failed = [(i["family"], i["item"]) for i in doc["items"] if i["verdict"] == "fail"]
    assert len(failed) == 1 and failed[0][0] == family and slow in failed[0][1], failed
    for other in (copy, noisy):
        code, doc, r = _json_check(str(src), str(other))
        assert code == 0, (other.name, [i for i in doc["items"] if i["verdict"] in ("fail", "warn")])
        assert doc["verdict"] == "pass"


@pytest.mark.parametrize("src,kind", ONEDNN, ids=lambda v: getattr(v, "name", v))
def test_onednn_sample_kind_slowed(tmp_path, src, kind):
    _assert_planted(tmp_path, src, kind, "onednn")


@pytest.mark.parametrize("rel,kind", CORPUS_ONEDNN, ids=lambda v: str(v).split("/")[-1])
def test_onednn_corpus_kind_slowed(tmp_path, corpus, rel, kind):
    _assert_planted(tmp_path, corpus / rel, kind, "onednn")


@pytest.mark.parametrize("src,op", TRACES, ids=lambda v: getattr(v, "name", v))
def test_trace_operator_slowed(tmp_path, src, op):
    if op is None:
        op = _first_item(src, "op")
    _assert_planted(tmp_path, src, op, "op")


@pytest.mark.parametrize("src,kernel", GPU, ids=lambda v: getattr(v, "name", v))
def test_gpu_kernel_slowed(tmp_path, src, kernel):
    if kernel is None:
        kernel = _first_item(src, "kernel").split("(")[0].split()[-1]
    _assert_planted(tmp_path, src, kernel, "kernel")


def _first_item(src, family):
    r = invoke_cli("compare", str(src), str(src), "--family", family, "--json", "-")
    return r.json()["items"][0]["item"]


def test_every_corpus_onednn_log_passes_against_itself_and_noise(tmp_path):
    if not CORPUS.is_dir():
        pytest.skip("public corpus absent")
    for src in sorted((CORPUS / "onednn_verbose").iterdir()):
        noisy = tmp_path / f"noise_{src.name}"
        perturb(src, noisy, noise=0.03, seed=5)
        for other in (src, noisy):
            code, doc, r = _json_check(str(src), str(other))
            assert code == 0, (src.name, r.output)


@pytest.mark.parametrize("src,family,limit", [
    (SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz", "onednn", None),
    (SAMPLES / "trace" / "torch2.13_cpu_train.pt.trace.json.gz", "op", 12),
], ids=["onednn-every-kind", "trace-top-operators"])
def test_each_item_slowed_under_noise_is_the_only_failure(tmp_path, src, family, limit):
    """30% slower plus ±3% noise on every record: for each item in turn, exactly that item fails."""
    from compare_helpers import memory_store
    from loganalyze.compare import check

    base = memory_store(src)
    items = list(check.check(base.con, base.con, families=family)["item"])[:limit]
    for n, item in enumerate(items):
        out = tmp_path / f"{n}_{src.name}"
        perturb(src, out, slow=item, factor=1.3, noise=0.03, seed=n)
        cand = memory_store(out)
        table = check.check(base.con, cand.con)
        failed = list(zip(table[table["verdict"] == "fail"]["family"], table[table["verdict"] == "fail"]["item"]))
        assert failed == [(family, item)], (item, failed)
        cand.close()
    base.close()
