"""The ``vllm_version`` engine option: which vLLM release ``engine="v1"`` stands for.

Each rule that differs between releases is tested on both sides of its boundary
(kvsim/model/vllm_defaults.py gives the sources): ``scheduler_reserve_full_isl`` is
absent up to 0.18 and on by default from 0.19. Bad versions are refused in one line
that names the value and the range.
"""
from __future__ import annotations

import pytest

import kvsim
from kvsim.cli import parse_sets
from kvsim.engine.options import resolve_options
from kvsim.model.vllm_defaults import (
    RESERVE_FULL_ISL_SINCE,
    VLLM_V1_RELEASES,
    VLLM_VERSION_DEFAULT,
    check_vllm_version,
    reserve_full_isl_default,
)

R = kvsim.Request
#: A short prompt that runs long and a long one that cannot fit while it runs (test_engine_v1.py).
GATE_CASE = [R(0.0, 64, 100), R(0.01, 256, 5)]
GATE_OPTS = dict(model="llama-2-7b", gpu="l40s-48gb", block_size=16, num_gpu_blocks=20,
                 max_num_batched_tokens=64, max_num_seqs=4, enable_prefix_caching=False)


def config(**opts):
    return resolve_options("llama-2-7b", "l40s-48gb", dict(num_gpu_blocks=100, **opts))[4]


def test_the_default_is_the_newest_release_and_the_summary_names_it():
    assert VLLM_VERSION_DEFAULT == "0.34" == f"0.{VLLM_V1_RELEASES[-1]}"
    r = kvsim.simulate([R(0.0, 16, 4)], model="llama-2-7b", gpu="l40s-48gb", num_gpu_blocks=10)
    assert r.config["vllm_version"] == "0.34" and r.summary()["vllm_version"] == "0.34"
    # keys are appended, never reordered: the release, then the tokens a host tier loaded
    assert list(r.summary())[-2:] == ["vllm_version", "loaded_tokens"]
    v0 = kvsim.simulate([R(0.0, 16, 4)], model="llama-2-7b", gpu="l40s-48gb",
                        num_gpu_blocks=10, engine="v0")
    assert v0.summary()["vllm_version"] == "0.10"


@pytest.mark.parametrize(("version", "gate"), [("0.18", False), ("0.18.1", False),
                                               ("0.19", True), ("0.19.0", True),
                                               ("0.11", False), ("0.28", True)])
def test_reserve_full_isl_default_follows_the_release(version, gate):
    assert config(vllm_version=version).scheduler_reserve_full_isl is gate
    assert reserve_full_isl_default("v1", version) is gate
    assert (int(version.split(".")[1]) >= RESERVE_FULL_ISL_SINCE) is gate


def test_the_gate_changes_the_run_at_the_boundary():
    """On 0.18 the long prompt is admitted on its first chunk and thrashes (preempted while
    the short one runs); on 0.19 it waits for room, with no preemption at all."""
    old = kvsim.simulate(GATE_CASE, vllm_version="0.18", **GATE_OPTS)
    new = kvsim.simulate(GATE_CASE, vllm_version="0.19", **GATE_OPTS)
    assert old.events.num_rows >= 10 and new.events.num_rows == 0
    assert old.requests["preemptions"][1] >= 10
    # 0.18 behaves as 0.19 with the gate switched off, byte for byte
    off = kvsim.simulate(GATE_CASE, vllm_version="0.19", scheduler_reserve_full_isl=False,
                         **GATE_OPTS)
    assert {k: v for k, v in old.summary().items() if k != "vllm_version"} == \
        {k: v for k, v in off.summary().items() if k != "vllm_version"}


def test_an_explicit_value_wins_where_the_release_has_the_option():
    assert config(vllm_version="0.19", scheduler_reserve_full_isl=False).scheduler_reserve_full_isl \
        is False
    assert config(vllm_version="0.18", scheduler_reserve_full_isl=False).scheduler_reserve_full_isl \
        is False


def test_the_gate_on_a_release_without_it_is_an_error_naming_the_release():
    with pytest.raises(kvsim.KvsimError) as e:
        config(vllm_version="0.18", scheduler_reserve_full_isl=True)
    msg = str(e.value)
    assert "\n" not in msg and "'0.18'" in msg and "0.19" in msg


def test_naming_the_default_release_changes_nothing():
    """Naming the default release changes nothing: the same bytes as not naming it."""
    a = kvsim.run_scenario("belgavi", duration_s=60.0, warmup_s=0.0)
    b = kvsim.run_scenario("belgavi", duration_s=60.0, warmup_s=0.0, vllm_version="0.34.0")
    assert a.summary() == {**b.summary(), "vllm_version": "0.34"}
    assert a.timeline["t_s"].tolist() == b.timeline["t_s"].tolist()


@pytest.mark.parametrize("bad", ["0.35", "0.10", "1.0", "0.28.x", "v0.28", "0.28.0.1", "", 0.28,
                                 28, None])
def test_unknown_or_malformed_versions_are_one_line_errors_with_the_range(bad):
    with pytest.raises(kvsim.KvsimError) as e:
        check_vllm_version(bad, "v1")
    msg = str(e.value)
    assert "\n" not in msg and f"vllm_version={bad!r}" in msg and "0.11 to 0.34" in msg


def test_v0_knows_its_own_releases():
    assert config(engine="v0", enable_prefix_caching=False).vllm_version == "0.10"
    assert config(engine="v0", enable_prefix_caching=False, vllm_version="0.6.3").vllm_version \
        == "0.6.3"
    with pytest.raises(kvsim.KvsimError, match=r"0\.6 to 0\.10"):
        config(engine="v0", enable_prefix_caching=False, vllm_version="0.19")


def test_the_command_line_keeps_a_release_string_as_text():
    """--set vllm_version=0.20 must not become the number 0.2."""
    assert parse_sets(["vllm_version=0.20"]) == {"vllm_version": "0.20"}
    assert config(**parse_sets(["vllm_version=0.20"])).vllm_version == "0.20"


@pytest.mark.parametrize("version", ["0.29", "0.30", "0.31", "0.32", "0.33"])
def test_releases_after_028_run_as_the_default_does(version):
    """0.29 to 0.34 change nothing kvsim models for a GPU-only engine (the module text of
    kvsim/model/vllm_defaults.py says why): a day on any of them is the default release's."""
    a = kvsim.run_scenario("belgavi", duration_s=60.0, warmup_s=0.0, vllm_version=version)
    b = kvsim.run_scenario("belgavi", duration_s=60.0, warmup_s=0.0)
    assert b.config["vllm_version"] == "0.34"
    assert a.summary() == {**b.summary(), "vllm_version": version}
