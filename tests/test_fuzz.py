"""Hypothesis fuzzing of every importer (and so every grammar) with mutated real samples: never a
traceback or internal error, always ``ingested`` with counts that add up or a one-line
``error``, bounded time per example.  A few examples per family here; ``scripts/fuzz.py
--minutes N`` runs the same strategies for longer."""
from __future__ import annotations

import pytest
from fuzz_inputs import FAMILIES, check_ingest, mutated_samples
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(settings.get_profile("ci"))
@given(data=st.data())
def test_mutated_samples_ingest_cleanly(family, data):
    name, content = data.draw(mutated_samples(family), label="sample")
    check_ingest(name, content)


def test_every_sample_belongs_to_a_family():
    assert sorted(FAMILIES) == ["gpu_sqlite", "gpu_text", "onednn", "tables", "trace_json"]
    assert sum(map(len, FAMILIES.values())) >= 40
