"""Chapter 1's worked numbers, computed with the same kvsim calls the chapter makes.

Seed 000 is "KV Cache Preemption in vLLM" (bytes per token, the Belgavi budget),
seed 003 is "Throughput collapse under load" (sizing max_num_seqs on an H100).
The last tests read the committed notebook and check that the numbers its prose
quotes (myst-nb glue) are the ones kvsim computes, so the page cannot drift
from the package.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import kvsim
from kvsim.book import charts, exercises, widgets
from kvsim.book.notebook import portable
from kvsim.units import GB, MB, GiB, KiB, MiB

from notebook_helpers import glued, read_chapter

NOTEBOOK = Path(__file__).resolve().parents[1] / "book" / "ch01-bytes-and-capacity.ipynb"


def belgavi(kv_dtype=None):
    """Belgavi as vLLM V1 budgets it on the A40 (the chapter's ``belgavi``)."""
    return kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.60,
                           kv_dtype=kv_dtype)


def seed_sum():
    """Seed 000's back-of-envelope reading (the chapter's ``seed_sum``)."""
    card = dataclasses.replace(kvsim.get_gpu("a40-48gb"), name="48 GB datasheet",
                               memory_bytes=48 * GB)
    return kvsim.kv_budget(card, "llama-2-7b", gpu_memory_utilization=0.60,
                           activation_bytes=2 * GB, engine="v0")


def h100(kv_dtype=None):
    return kvsim.kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90,
                           kv_dtype=kv_dtype)


# --- bytes per token ---------------------------------------------------------------

def test_seed000_mha_7b_is_half_a_mib_per_token_and_fp8_a_quarter():
    assert kvsim.kv_bytes_per_token("llama-2-7b") == 2 * 32 * 4096 * 2 == 524_288 == MiB // 2
    assert kvsim.kv_bytes_per_token("llama-2-7b", "fp8") == 262_144 == MiB // 4


def test_seed000_and_seed003_gqa_8b_is_128_kib_per_token():
    assert kvsim.kv_bytes_per_token("llama-3.1-8b") == 2 * 32 * 8 * 128 * 2 == 128 * KiB


def test_seed003_70b_is_320_kib_two_and_a_half_times_the_8b_and_mha_would_be_8x():
    big = kvsim.get_model("llama-3.1-70b")
    assert kvsim.kv_bytes_per_token(big) == 320 * KiB
    assert kvsim.kv_bytes_per_token(big) / kvsim.kv_bytes_per_token("llama-3.1-8b") == 2.5
    mha = dataclasses.replace(big, name="70b-mha", num_kv_heads=big.num_attention_heads)
    assert kvsim.kv_bytes_per_token(mha) == 8 * kvsim.kv_bytes_per_token(big)


def test_mla_has_no_factor_two():
    ds = kvsim.get_model("deepseek-v3")
    assert ds.attention_kind == "mla"
    assert kvsim.kv_bytes_per_token(ds) == 61 * (512 + 64) * 2 == 70_272
    # The chapter's comparison: the same 128 heads with an ordinary K (192 wide) and V (128).
    as_mha = 61 * 128 * (192 + 128) * 2
    assert round(as_mha / kvsim.kv_bytes_per_token(ds)) == 71
    # Llama-3.1-70B needs about 4.66 times the cache per token of DeepSeek-V3.
    assert round(kvsim.kv_bytes_per_token("llama-3.1-70b") / kvsim.kv_bytes_per_token(ds), 2) == 4.66


def test_numpy_derivation_matches_kvsim_for_every_non_mla_preset():
    np = pytest.importorskip("numpy")
    for name in kvsim.list_models():
        s = kvsim.get_model(name)
        if s.attention_kind == "mla":
            continue
        derived = int(np.prod([2, s.kv_layers, s.num_kv_heads, s.head_dim, kvsim.KV_DTYPES[s.dtype]]))
        assert derived == kvsim.kv_bytes_per_token(s), name


def test_config_json_of_llama_31_8b_gives_the_preset_figures(tmp_path):
    import json

    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "max_position_embeddings": 131072, "vocab_size": 128256,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    spec = kvsim.ModelSpec.from_hf_config(path, name="x")
    assert spec.head_dim == 128            # derived: hidden_size / num_attention_heads
    assert spec.kv_bytes_per_token() == 131_072
    assert spec.num_params == 8_030_261_248
    assert spec.max_model_len == 131_072


# --- the Belgavi budget (seed 000) --------------------------------------------------

def test_seed000_belgavi_budget_in_decimal_gb():
    b = seed_sum()
    assert b.usable_bytes == 28_800_000_000               # 48 GB x 0.60
    assert round(b.weight_bytes / GB, 1) == 13.5
    assert round(b.kv_bytes / GB, 1) == 13.3


def test_seed000_belgavi_decimal_reading_26600_tokens_1700_blocks_24_requests():
    b = seed_sum()
    seed_pool = round(b.kv_bytes / (GB // 10)) * (GB // 10)
    seed_per_token = b.kv_bytes_per_token * MB // MiB
    assert (seed_pool, seed_per_token) == (13_300_000_000, 500_000)
    tokens = seed_pool / seed_per_token
    assert tokens == 26_600
    assert round(tokens / 16, -2) == 1_700
    assert round(tokens / (850 + 250)) == 24


def hand_kv_bytes(memory_bytes, utilization, model, activation_bytes):
    """The budget by hand: the usable share of the card, minus two bytes a weight (FP16/BF16),
    minus the activations and runtime overhead."""
    return round(utilization * memory_bytes) - 2 * kvsim.get_model(model).num_params - activation_bytes


def test_belgavi_binary_reading_is_smaller_by_the_mib_mb_ratio():
    """The seed's 48 GB x 0.60 - 13.5 GB - 2 GB read in bytes: 13.3 GB of KV is 25,412 tokens of
    0.5 MiB, not 26,600 of 0.5 MB; V0 blocks it as whole blocks of 16 (no null block)."""
    b = seed_sum()
    kv = hand_kv_bytes(48 * GB, 0.60, "llama-2-7b", 2 * GB)
    assert b.kv_bytes == kv
    blocks = kv // (16 * (MiB // 2))
    assert (b.blocks, b.tokens, b.max_concurrent(850 + 250)) == (blocks, 16 * blocks, blocks // 69)
    assert b.kv_bytes / b.kv_bytes_per_token == pytest.approx(kv / (MiB // 2), rel=1e-12)
    assert round(100 * (MiB / MB - 1), 1) == 4.9
    assert round(100 * (GiB / GB - 1), 1) == 7.4


def test_belgavi_on_an_a40_as_vllm_v1_budgets_it():
    """CUDA's 44.34 GiB x 0.60, minus weights and ~0.49 GiB of profiling peak and CUDA
    context: 14.56 GB (13.56 GiB), 1,735 usable blocks, 25 requests of 1,100 tokens."""
    b = belgavi()
    assert round(b.gpu.memory_bytes / GiB, 2) == 44.34          # what CUDA reports for an A40
    assert b.activation_bytes == b.peak_activation_bytes + b.non_torch_bytes
    assert round(b.activation_bytes / GiB, 2) == 0.49
    kv = hand_kv_bytes(b.gpu.memory_bytes, 0.60, "llama-2-7b", b.activation_bytes)
    assert b.kv_bytes == kv
    vllm_blocks = kv // (16 * (MiB // 2))
    assert (b.vllm_blocks, b.blocks) == (vllm_blocks, vllm_blocks - 1)      # one null block
    assert (b.tokens, b.max_concurrent(850 + 250)) == (16 * b.blocks, b.blocks // 69)


def test_seed000_longer_answers_capacity_about_18():
    b = belgavi()
    assert round(26_600 / (850 + 600)) == 18
    assert b.blocks_for(1_450) == 91 and 91 * 16 - 1_450 == 6
    assert seed_sum().max_concurrent(850 + 600) == seed_sum().blocks // 91
    assert b.max_concurrent(850 + 600) == b.blocks // 91


def test_blocks_and_internal_fragmentation():
    b = belgavi()
    assert b.blocks_for(1_100) == 69 and 69 * 16 - 1_100 == 4
    assert b.blocks_for(6_000) * 16 == 6_000
    # reserving max_model_len per request
    assert b.tokens // b.model.max_model_len == b.blocks // b.blocks_for(b.model.max_model_len)


def test_fp8_doubles_the_belgavi_pool():
    assert belgavi("fp8").vllm_blocks == 2 * belgavi().vllm_blocks
    assert belgavi("fp8").tokens == 2 * belgavi().tokens + 16      # one null block either way


# --- sizing max_num_seqs (seed 003) ------------------------------------------------

def test_seed003_50_gib_holds_409600_tokens_and_68_requests_at_6k():
    tokens = 50 * GiB // kvsim.kv_bytes_per_token("llama-3.1-8b")
    assert tokens == 409_600
    assert tokens // 6_000 == 68
    assert round(256 / 68, 2) == 3.76


def test_seed003_h100_budget_from_what_cuda_reports_fits_74_at_6k():
    """79.18 GiB x 0.90 (what CUDA reports) minus 14.96 GiB of weights and the activations:
    the pool, by hand, holds 74 requests at 6k, not the seed's 68 from a round 50 GiB; V1's
    default of 1,024 sequences admits 13.8 times that."""
    b = h100()
    assert round(b.gpu.memory_bytes / GiB, 2) == 79.18
    kv = hand_kv_bytes(b.gpu.memory_bytes, 0.90, "llama-3.1-8b", b.activation_bytes)
    assert b.kv_bytes == kv and kv > 50 * GiB
    blocks = kv // (16 * 128 * KiB) - 1                      # V1's null block
    assert b.max_concurrent(6_000) == blocks // 375 > 68
    cfg = kvsim.simulate([], model="llama-3.1-8b", gpu="h100-80gb").config
    assert cfg["max_num_seqs"] == 1024                       # vLLM V1's default on an H100
    assert round(1024 / b.max_concurrent(6_000), 1) == 13.8
    fp8_blocks = kv // (16 * 64 * KiB) - 1
    assert h100("fp8").max_concurrent(6_000) == fp8_blocks // 375


# --- the chapter's widgets and charts agree with kvsim -------------------------------

def test_calculator_report_is_kv_budget():
    rep = widgets.capacity_report("llama-2-7b", "a40-48gb", gpu_memory_utilization=0.60,
                                  prompt_tokens=850, output_tokens=250)
    b = belgavi()
    assert (rep["kv_bytes"], rep["blocks"], rep["tokens"], rep["max_concurrent"]) == \
        (b.kv_bytes, b.blocks, b.tokens, 25)
    assert "GB" in widgets.report_html(rep) and "GiB" in widgets.report_html(rep)


def test_calculator_shows_the_error_in_the_widget_not_a_traceback():
    pytest.importorskip("ipywidgets")
    w = widgets.capacity_calculator()

    def shown() -> str:
        (only,) = w.children[-1].outputs
        return only["data"]["text/html"]

    assert "Concurrent requests" in shown() and ">25<" in shown()
    w.children[0].value = "llama-3.1-70b"              # 141 GB of weights on a 48 GB card
    assert "gpu_memory_utilization" in shown() and "Concurrent" not in shown()
    w.children[0].value = "llama-2-7b"
    w.children[1].value = "fp8"
    fp8 = belgavi("fp8").max_concurrent(1_100)          # 3,471 blocks // 69 per request
    assert fp8 == belgavi("fp8").blocks // 69 and f">{fp8}<" in shown()


def test_capacity_grid_matches_kv_budget_and_marks_impossible_points_zero():
    rows = charts.capacity_grid(["llama-2-7b"], "a40-48gb", kv_dtypes=("bf16",),
                                utilizations=[0.28, 0.60], output_tokens=[250, 600],
                                prompt_tokens=850)
    got = {(r["util"], r["answer"]): r["requests"] for r in rows}
    b = belgavi()
    assert got[(0.6, 250)] == b.blocks // 69 and got[(0.6, 600)] == b.blocks // 91
    # weights + overhead exceed 28% of the card
    assert 0.28 * b.gpu.memory_bytes < b.weight_bytes + b.activation_bytes
    assert got[(0.28, 250)] == 0


def test_budget_chart_parts_add_up_to_the_gpu():
    rows = charts.budget_data({"b": belgavi()})
    assert sum(r["gb"] for r in rows) == pytest.approx(belgavi().gpu.memory_bytes / GB, abs=0.02)
    assert [r["part"] for r in rows][2] == "KV cache"


def test_capacity_chart_rejects_uneven_answer_grid():
    rows = [{"model": "m", "kv": "bf16", "util": 0.5, "answer": a, "requests": 1} for a in (1, 2, 4)]
    with pytest.raises(kvsim.KvsimError):
        charts.capacity_chart(rows)


# --- the committed notebook ------------------------------------------------------------

CH01_EXERCISES = [i for i in exercises.list_exercises() if i.startswith("ch01-")]


def _notebook():
    return read_chapter(NOTEBOOK)


def test_notebook_glue_matches_kvsim():
    g = glued(_notebook())
    b, h = belgavi(), h100()
    assert g["bpt_7b"] == 524_288 and g["bpt_8b"] == 131_072
    assert g["bpt_70b"] == 327_680 and g["bpt_dsv3"] == 70_272
    assert g["b_blocks"] == b.blocks and g["b_tokens"] == b.tokens
    assert g["b_kv_gb"] == portable(b.kv_bytes / GB) and g["b_kv_gib"] == portable(b.kv_bytes / GiB)
    assert g["b_requests"] == b.max_concurrent(1_100) == b.blocks // 69
    assert g["b_requests_long"] == b.max_concurrent(1_450) == b.blocks // 91
    assert g["decimal_tokens"] == 26_600 and round(g["decimal_requests"]) == 24
    assert g["s_kv_gb"] == portable(seed_sum().kv_bytes / GB) and g["s_requests"] == seed_sum().max_concurrent(1_100)
    assert g["h_tokens"] == h.tokens and g["h_requests"] == h.max_concurrent(6_000) == h.blocks // 375
    assert g["h_log_tokens"] == h.log_tokens
    assert g["quoted_h100_requests"] == 68 and g["default_max_num_seqs"] == 1024   # seed 003; vLLM V1
    # the cap never binds: prompts of 2,000 tokens fill the pool first
    assert g["prompt_ceiling"] == h.blocks // h.blocks_for(2_000)
    assert g["h_requests"] < g["peak_running"] <= g["prompt_ceiling"] and g["burst_preemptions"] > 0
    assert g["contiguous_requests"] == b.blocks // b.blocks_for(b.model.max_model_len)
    # exercise "pool in GiB": a GiB is 7.4% larger than a GB, so a GiB figure read as GB
    # makes the pool look 6.9% smaller (the first edition said 7.4% for both)
    assert round(g["gap_gib_pct"], 1) == 7.4 and round(g["misread_pct"], 1) == 6.9
    for ex_id in CH01_EXERCISES:                      # the solutions quote the checks' values
        assert g[ex_id] == portable(exercises.expected(ex_id)), ex_id


def _printed(nb, call: str) -> dict:
    """{id: printed lines} of every code cell calling ``exercises.<call>("<id>", ...)``."""
    printed = {}
    for cell in nb.cells:
        m = re.search(rf'exercises\.{call}\("([^"]+)"', cell.source) if cell.cell_type == "code" else None
        if m:
            text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            printed[m.group(1)] = text.strip().splitlines()
    return printed


def test_every_exercise_label_has_a_check_committed_unanswered():
    nb = _notebook()
    labels = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            labels |= set(re.findall(r":label: ex-(ch01-[a-z0-9-]+)", cell.source))
    assert len(labels) >= 5 and labels == set(CH01_EXERCISES)
    printed = _printed(nb, "check")
    assert set(printed) == labels
    assert all(len(lines) == 1 and lines[0].startswith("Not answered yet: ")
               for lines in printed.values()), printed


def test_every_prediction_is_in_the_chapter_committed_unpredicted():
    printed = _printed(_notebook(), "predict")
    assert set(printed) == {p for p in exercises.list_predictions() if p.startswith("ch01-")}
    assert all(len(lines) == 1 and lines[0].startswith("Not predicted yet: ")
               for lines in printed.values()), printed


def test_notebook_is_committed_with_outputs():
    nb = _notebook()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code)
    assert sum(bool(c.outputs) for c in code) >= len(code) // 2
