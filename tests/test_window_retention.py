"""Sliding-window layers and the prefix cache: the rules of vLLM 0.34, hand-derived.

What a window group's hit needs (``SlidingWindowManager.find_longest_cache_hit``), which of
its blocks keep a hash (``reachable_block_mask`` under ``prefix_cache_retention_interval``),
the hit every group agrees on (``HybridKVCacheCoordinator.find_longest_cache_hit``) and the
option's defaults and checks (vllm/config/cache.py, vllm/envs.py,
``_validate_prefix_cache_retention_interval``). The engine runs them block by block
(:mod:`kvsim.engine.blocks.window_cache`; through the engine: tests/test_window_cache.py).
"""
from __future__ import annotations

import pytest

import kvsim
from kvsim.engine.blocks.window_retention import (
    DENSE,
    agreed_hit_blocks,
    replay_boundary,
    retained_window_blocks,
    window_hit_blocks,
    window_hit_need,
)
from kvsim.engine.options import resolve_options
from kvsim.errors import KvsimError

NULL = -1                              # the block models' null block (tests/window_block_model.py)

BS = 16
MISTRAL_WINDOW = 4096                  # Mistral-7B v0.1 and Gemma-2-9B's window layers


def _hit(cached: list[bool], need: int) -> int:
    return window_hit_blocks(lambda i: cached[i], len(cached), need)


# ------------------------------------------------------------------ what a hit needs
@pytest.mark.parametrize("cached, expected", [
    ([False] * 10, 0),
    ([True], 1),
    ([True, False], 1),
    ([True, True], 2),
    ([True, True, False], 2),
    ([True, True, True], 3),
    ([True, True, True, False], 3),
    ([True, True, False, True, False, False, True, True, False, True, True, True], 12),
    ([True, True, False, True, False, False, True, True, False, False, False], 8),
    ([True, True, False, True, False, False, True, True, False, False, False, True], 8),
])
def test_a_window_hit_needs_the_blocks_of_the_last_window_less_one_tokens(cached, expected):
    """vLLM's tests/v1/core/test_single_type_kv_cache_manager.py,
    ``test_sliding_window_possible_cached_prefix`` (window 4, block size 2: a hit needs
    ceil(3 / 2) = 2 contiguous cached blocks ending at it, or every block from the first)."""
    need = window_hit_need(4, 2)
    assert need == 2
    assert _hit(cached, need) == expected


def test_mistral_needs_256_blocks_for_a_hit_past_its_window():
    assert window_hit_need(MISTRAL_WINDOW, BS) == 256        # ceil(4,095 / 16)
    assert window_hit_need(4097, BS) == 256
    assert window_hit_need(4098, BS) == 257


# ------------------------------------------------------------------ which blocks keep a hash
def test_dense_retention_hashes_every_block():
    assert retained_window_blocks(0, 400, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=DENSE, boundaries=(4999,)) is None


def test_retention_0_keeps_only_the_window_that_ends_at_the_replay_boundary():
    """A 5,000-token prompt: the replay boundary is token 4,999, floored to block 312; the
    256 blocks before it (56 .. 311) get a hash, the others none."""
    boundary = replay_boundary(5000)
    assert boundary == 4999
    mask = retained_window_blocks(0, 312, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=0, boundaries=(boundary,))
    assert mask is not None
    assert [i for i, kept in enumerate(mask) if kept] == list(range(56, 312))
    # cached as the prompt's chunks fill the blocks: the mask is the same, piece by piece
    pieces = [retained_window_blocks(lo, hi, window=MISTRAL_WINDOW, block_size=BS,
                                     retention_interval=0, boundaries=(boundary,))
              for lo, hi in ((0, 128), (128, 256), (256, 312))]
    assert [k for piece in pieces for k in (piece or [])] == mask
    # the answer's blocks (past the prompt) never get one
    assert not any(retained_window_blocks(312, 331, window=MISTRAL_WINDOW, block_size=BS,
                                          retention_interval=0, boundaries=(boundary,)) or [])


def test_retention_0_keeps_every_block_of_a_prompt_shorter_than_the_window():
    mask = retained_window_blocks(0, 62, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=0, boundaries=(replay_boundary(1000),))
    assert mask == [True] * 62


def test_a_positive_interval_keeps_the_window_that_ends_each_segment():
    """8,192 tokens = 512 blocks a segment: blocks 256 .. 511 of each, and the replay tail."""
    mask = retained_window_blocks(0, 1100, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=8192, boundaries=(replay_boundary(17000),))
    assert mask is not None
    kept = [i for i, k in enumerate(mask) if k]
    # segments: 256 .. 511 and 768 .. 1023; the replay tail (token 16,999, block 1,062):
    # 806 .. 1061
    assert kept == list(range(256, 512)) + list(range(768, 1062))
    # an interval no longer than the window leaves nothing out
    assert retained_window_blocks(0, 100, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=4096) is None


def test_a_junction_keeps_its_window_too():
    mask = retained_window_blocks(0, 400, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=0, boundaries=(4999, 5296))
    assert mask is not None
    assert [i for i, k in enumerate(mask) if k] == list(range(56, 331))


# ------------------------------------------------------------------ a conversation's next turn
def _turn_two_hits(retention: int | str) -> tuple[int, int]:
    """Turn 1: a 5,000-token prompt and a 300-token answer (5,299 tokens computed: 331 full
    blocks); turn 2 resends all of it and 200 tokens more (5,500: a hit of at most 5,499
    tokens, 343 blocks). Nothing was evicted. Returns (Mistral's hit, Gemma-2's hit) in tokens."""
    computed_blocks = 5299 // BS
    mask = retained_window_blocks(0, computed_blocks, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=retention, boundaries=(replay_boundary(5000),))
    cached = [True] * computed_blocks if mask is None else mask
    max_blocks = (5500 - 1) // BS
    need = window_hit_need(MISTRAL_WINDOW, BS)

    def window_cached(i: int) -> bool:
        return i < computed_blocks and cached[i]

    mistral, junction = agreed_hit_blocks(None, window_cached, max_blocks, need)
    assert junction == 0                         # one group: no junction
    full_hit = min(computed_blocks, max_blocks)  # the full group hashes every full block
    gemma, _ = agreed_hit_blocks(full_hit, window_cached, max_blocks, need)
    return mistral * BS, gemma * BS


def test_a_second_turn_on_mistral_hits_the_first_prompt_less_its_last_partial_block():
    """Retention 0 (vLLM's default from 0.29): the window blocks of the answer never got a
    hash, so the second turn hits up to the first turn's replay boundary, floored: 4,992
    tokens (312 blocks), where dense retention hits the whole history, 5,296 (331 blocks)."""
    assert _turn_two_hits(0) == (4992, 4992)
    assert _turn_two_hits(DENSE) == (5296, 5296)


def test_gemma_2s_full_group_still_hits_and_pins_the_junction():
    """Gemma-2: the full group finds all 331 blocks; the window group stops at 312, so the
    request hits 312 blocks and the junction, 331 blocks (5,296 tokens), becomes its
    ``shared_prefix_boundary``: its window group keeps the window that ends there."""
    cached = retained_window_blocks(0, 331, window=MISTRAL_WINDOW, block_size=BS,
                                    retention_interval=0, boundaries=(4999,))
    assert cached is not None
    hit, junction = agreed_hit_blocks(331, lambda i: i < 331 and cached[i], 343, 256)
    assert (hit, junction) == (312, 331)
    # had the window group kept the junction's window, the hit would reach it
    kept = retained_window_blocks(0, 331, window=MISTRAL_WINDOW, block_size=BS,
                                  retention_interval=0, boundaries=(4999, junction * BS))
    assert kept is not None
    assert agreed_hit_blocks(331, lambda i: i < 331 and kept[i], 343, 256) == (331, 0)


def test_an_evicted_block_in_the_window_drops_the_hit_to_the_run_from_block_0_or_nothing():
    need = window_hit_need(MISTRAL_WINDOW, BS)
    cached = [56 <= i < 312 and i != 100 for i in range(343)]
    assert _hit(cached, need) == 0
    short = [i < 62 and i != 40 for i in range(70)]            # a prompt shorter than the window
    assert _hit(short, need) == 40


# ------------------------------------------------------------------ the option
@pytest.mark.parametrize("version, expected", [("0.34", 0), ("0.29", 0), ("0.28", DENSE),
                                               ("0.23", DENSE), ("0.20", DENSE)])
def test_the_default_follows_the_release(version, expected):
    config = resolve_options("mistral-7b", "a100-80gb", {"vllm_version": version})[4]
    assert config.prefix_cache_retention_interval == expected


def test_v0_has_no_retention():
    config = resolve_options("mistral-7b", "a100-80gb", {"engine": "v0"})[4]
    assert config.prefix_cache_retention_interval == DENSE


@pytest.mark.parametrize("model, options, message", [
    ("mistral-7b", {"prefix_cache_retention_interval": 65},
     "prefix_cache_retention_interval=65 is out of range: expected 0, 'dense' or a positive "
     "multiple of block_size=16"),
    ("llama-2-7b", {"prefix_cache_retention_interval": 64},
     "prefix_cache_retention_interval=64 has no effect on a model without sliding-window"),
    ("mistral-7b", {"prefix_cache_retention_interval": -16},
     "prefix_cache_retention_interval=-16 is out of range"),
    ("mistral-7b", {"prefix_cache_retention_interval": "sparse"},
     "prefix_cache_retention_interval='sparse' is not a retention interval"),
    ("mistral-7b", {"prefix_cache_retention_interval": 0, "vllm_version": "0.20"},
     "prefix_cache_retention_interval=0 is not available with engine='v1' vllm_version='0.20'"),
])
def test_bad_intervals_are_one_line_errors(model, options, message):
    with pytest.raises(KvsimError, match="^" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")) as err:
        resolve_options(model, "a100-80gb", options)
    assert "\n" not in str(err.value)


def test_good_intervals_are_kept():
    for value, kept in ((0, 0), (8192, 8192), ("dense", DENSE), ("DENSE", DENSE)):
        config = resolve_options("mistral-7b", "a100-80gb",
                                 {"prefix_cache_retention_interval": value})[4]
        assert config.prefix_cache_retention_interval == kept
    # 0 and dense are accepted on a model without window layers (vLLM: 0 is a no-op there)
    assert resolve_options("llama-2-7b", "a100-80gb", {})[4].prefix_cache_retention_interval == 0


# ------------------------------------------------------------------ block by block, as vLLM runs it
MISTRAL = (MISTRAL_WINDOW,)              # one window group
GEMMA_2 = (None, MISTRAL_WINDOW)         # a full group, then a window group


def _model(retention: int | str, windows: tuple[int | None, ...] = MISTRAL,
           num_blocks: int = 2000):
    from window_block_model import BlockModel
    return BlockModel(num_blocks, block_size=BS, windows=windows, retention_interval=retention)


def _conversation(retention: int | str, num_blocks: int = 2000, filler_tokens: int = 0,
                  windows: tuple[int | None, ...] = MISTRAL) -> int:
    """Turn 1 of a conversation (prompt 5,000 in 2,048-token chunks, an answer of 301 tokens:
    5,300 computed), then, if asked, another request of ``filler_tokens`` tokens, then turn 2
    (5,500 tokens): its hit in tokens, from the block-by-block model."""
    model = _model(retention, windows, num_blocks)
    assert model.run(1, 7, 5000, 301, chunk=2048) == 0
    if filler_tokens:
        model.run(2, 8, filler_tokens, 1, chunk=2048)
    return model.admit(3, 7, 5500)


def test_block_by_block_a_second_turn_hits_what_the_rules_say():
    """The window frees during turn 1's answer (blocks 0-74 leave the window), the finish, and
    the lookup, block by block: 4,992 tokens with retention 0, 5,296 dense, as
    :func:`_turn_two_hits` derives from the rules alone."""
    assert _conversation(0) == 4992 == _turn_two_hits(0)[0]
    assert _conversation(DENSE) == 5296 == _turn_two_hits(DENSE)[0]
    # 8,192-token segments keep blocks 256-511 of the first: the answer's blocks up to 330 too
    assert _conversation(8192) == 5296
    assert _conversation(16384) == 4992       # blocks 768-1023 of the first: past the answer


def test_unhashed_window_blocks_are_reused_first_and_the_first_window_free_is_evicted_first():
    """A 400-block pool: after turn 1, 256 blocks keep a hash (56-311), 144 do not. Another
    request of 144 blocks takes only unhashed ones (prepended, reused first), so turn 2 still
    hits; one of 145 blocks evicts the oldest hashed block, 56 (the first the window freed
    during the answer, at the queue's front of the cached ones), and a window hit past the
    window needs all 256: turn 2 hits nothing."""
    assert _conversation(0, num_blocks=400, filler_tokens=144 * BS) == 4992
    assert _conversation(0, num_blocks=400, filler_tokens=145 * BS) == 0


def test_block_by_block_gemma_2s_full_group_hits_and_its_window_group_bounds_the_hit():
    """Gemma-2 (a full group and a window group over one pool): the full group keeps every
    block of turn 1 (331), the window group 56-311, so turn 2 hits 312 blocks and pins 331 as
    its junction; a model of full attention only hits all 331."""
    model = _model(0, GEMMA_2)
    model.run(1, 7, 5000, 301, chunk=2048)
    assert model.lookup(7, 5500) == (312, 331)
    assert _conversation(0, windows=GEMMA_2) == 4992 == _turn_two_hits(0)[1]
    assert _conversation(DENSE, windows=GEMMA_2) == 5296
    assert _conversation(0, windows=(None,)) == 5296


def test_block_by_block_the_window_group_holds_only_its_window_with_the_cache_on():
    """While turn 1 decodes, its window group holds at most ceil(4,096 / 16) + 1 blocks and the
    full group all of them: after the last scheduled token (slots for 5,300 tokens, 332 blocks;
    5,299 processed, so 75 window blocks freed) the pool has 2,000 - 332 - 257 free."""
    model = _model(0, GEMMA_2)
    model.admit(1, 7, 5000)
    computed = 0
    for n in (2048, 2048, 904):
        assert model.schedule(1, computed, n, 5000)
        computed += n
    for k in range(300):
        assert model.schedule(1, computed, 1, 5000 + k + 1)
        computed += 1
    assert computed == 5300
    full, window = model.tables[1]
    assert len(full) == 332 and NULL not in full
    assert sum(b != NULL for b in window) == 332 - 75
    assert len(model.queue) == 2000 - 332 - (332 - 75)


def test_the_exporters_cache_config_label_shows_the_runs_interval():
    """``vllm:cache_config_info``'s ``prefix_cache_retention_interval`` is ``str()`` of vLLM's
    value: "0" by default, "None" for dense (0.28 and earlier), the interval when set."""
    from kvsim.observe.series import cache_config_labels
    wl = kvsim.Workload.from_requests([kvsim.Request(0.0, 100, 5)])
    for options, label in (({}, "0"), ({"vllm_version": "0.28"}, "None"),
                           ({"prefix_cache_retention_interval": 8192}, "8192")):
        result = kvsim.simulate(wl, model="mistral-7b", gpu="a100-80gb", num_gpu_blocks=100,
                                **options)
        labels = cache_config_labels(result.config, "v1", 100)
        assert labels["prefix_cache_retention_interval"] == label
