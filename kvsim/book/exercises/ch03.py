"""Chapter 3, *Swap versus recompute*: its exercises and predictions.

Every expected value is computed with the cost model the engine uses
(:mod:`kvsim.engine.costs`) or by running the engine; nothing is typed in. Seed 000
is "KV Cache Preemption in vLLM" (Belgavi's 1,100-token request, 0.5 MiB per
token), seed 001 "When to Swap vs Recompute" (4K tokens at 128 KiB over PCIe
4.0); the block-size study is the PagedAttention paper's (Kwon et al., SOSP
2023, §7.3: OPT-13B on an A100). The exercises ask about lengths the chapter
never prints (6,144 tokens; Belgavi's request grown to 2,400), so no answer
appears above its question.
"""
from __future__ import annotations

from typing import TypedDict

from kvsim.engine.costs import (
    CostModel,
    crossover_tokens,
    recompute_time_s,
    swap_round_trip_s,
    swap_time_s,
    transfer_copies,
)
from kvsim.engine.uncertainty import VERDICTS, ratio_band, uncertain_lengths, verdict
from kvsim.model.memory import kv_bytes_per_token
from kvsim.model.presets import get_model
from kvsim.model.spec import ModelSpec
from kvsim.runs.scenarios import run_scenario
from kvsim.units import GB, GiB, cdiv

from .base import Exercise, Prediction, metric
from .ch03_tier import TIER_EXERCISES, TIER_PREDICTIONS
from .setups import BELGAVI

#: Seeds over which the chapter's simulations report a median (and spread).
SEEDS = tuple(range(5))

#: Belgavi's request (seed 000): 850 + 250 tokens of Llama-2-7B on the A40.
BELGAVI_TOKENS = BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"]
class Seed001Request(TypedDict):
    """Seed 001's request: its model, its tokens and the nominal PCIe link (bytes per second)."""
    model: str
    tokens: int
    nominal_pcie: int


class BlockStudy(TypedDict):
    """PagedAttention's block-size study: the model, the GPU and the sequence's tokens."""
    model: str
    gpu: str
    tokens: int


#: Seed 001's request: 4K tokens of Llama-3.1-8B (128 KiB per token).
SEED001 = Seed001Request(model="llama-3.1-8b", tokens=4_096, nominal_pcie=32 * GB)
#: The exercises' Llama-3.1-8B request (not one the chapter prints).
EX_TOKENS = 2_100
#: The exercises' long Llama-3.1-8B request (1.5 x seed 001's; not one the chapter prints, and
#: 8,192 would put the A100 round trip within 2% of the table's 4,096-token recompute).
LONG_TOKENS = 6_144
#: The block-size study: PagedAttention §7.3, OPT-13B on an A100, a 1,024-token sequence.
STUDY = BlockStudy(model="opt-13b", gpu="a100-80gb", tokens=1_024)
#: The links the chapter compares (effective one-direction bytes per second).
SHARED_LINK = 4 * GB
#: vLLM V0's default --swap-space (GiB per GPU).
V0_SWAP_SPACE = 4 * GiB
#: The what-if block size (Belgavi's request on the H100).
WHATIF_BLOCK = 64
#: A link Belgavi's A40 shares with its network card, as a copy benchmark measured it.
HALF_SHARED_LINK = 10 * GB
#: The answers of the chapter's choice exercises (kvsim.engine.uncertainty.VERDICTS).
CHOICES = VERDICTS
#: The what-if times preempted.
WHATIF_TIMES = 3
#: The victim of the slow-link prediction: an 850-token prompt with 450 generated.
SLOW_LINK_TOKENS = 850 + 450


def _ms(seconds: float) -> float:
    return 1e3 * seconds


def _kvb(model: str | ModelSpec) -> int:

    return kv_bytes_per_token(model)


def _blocks(tokens: int, block_size: int = 16) -> int:
    return cdiv(tokens, block_size)


# ------------------------------------------------------------------------- exercises

def _swap_bytes() -> tuple[int, str]:
    kvb, blocks = _kvb("llama-3.1-8b"), _blocks(EX_TOKENS)
    n = blocks * 16 * kvb
    return n, (f"ceil({EX_TOKENS:,} / 16) = {blocks} blocks x 16 tokens x {kvb:,} B = {n:,} B "
               f"each way: a swap moves whole blocks")


def _swap_bytes_7b() -> int:
    # the chapter's worked example's 0.5 MiB per token (Llama-2-7B), not Llama-3.1-8B's
    return _blocks(EX_TOKENS) * 16 * _kvb(BELGAVI["model"])


def _swap_bytes_decimal_kib() -> int:
    # 128 KiB read as 128,000 B
    return _blocks(EX_TOKENS) * 16 * (_kvb("llama-3.1-8b") // 1024) * 1000


def _copies() -> tuple[int, str]:

    layers, blocks = get_model("llama-3.1-8b").kv_layers, _blocks(EX_TOKENS)
    n = transfer_copies(blocks, layers)
    return n, f"{blocks} blocks x {layers} layers x 2 (K and V) = {n:,} copies each way"


def _a100_round_trip() -> tuple[float, str]:

    t = _ms(swap_round_trip_s(LONG_TOKENS, SEED001["model"], "a100-80gb"))
    return t, (f"2 x ({LONG_TOKENS:,} x 128 KiB / 25 GB/s + {_blocks(LONG_TOKENS)} blocks x 32 "
               f"layers x 2 x 3 us) = {t:.1f} ms: the copies' fixed cost adds more than the bytes")


def _a100_round_trip_nominal() -> float:
    return _ms(2 * LONG_TOKENS * _kvb(SEED001["model"]) / SEED001["nominal_pcie"])


def _a100_round_trip_no_copies() -> float:

    return _ms(swap_round_trip_s(LONG_TOKENS, SEED001["model"], "a100-80gb",
                                 CostModel(swap_copy_overhead_s=0.0)))


def _a100_round_trip_double_copies() -> float:
    """The copies counted for both directions, then the whole doubled again."""
    bytes_only = _a100_round_trip_no_copies()
    return bytes_only + 2 * (_a100_round_trip()[0] - bytes_only)


def _a40_recompute(tokens: int = BELGAVI_TOKENS) -> float:

    return _ms(recompute_time_s(tokens, BELGAVI["model"], BELGAVI["gpu"]))


def _swap_space_requests() -> tuple[int, str]:
    block_bytes = 16 * _kvb(BELGAVI["model"])
    space_blocks = V0_SWAP_SPACE // block_bytes
    n = space_blocks // _blocks(BELGAVI_TOKENS)
    return n, (f"4 GiB / {block_bytes:,} B per block = {space_blocks} blocks; "
               f"{space_blocks} // {_blocks(BELGAVI_TOKENS)} blocks per request = {n}; the next "
               f"victim stops the whole V0 engine")


def _swap_space_rounded_up() -> int:
    block_bytes = 16 * _kvb(BELGAVI["model"])
    return -(-(V0_SWAP_SPACE // block_bytes) // _blocks(BELGAVI_TOKENS))


def _swap_space_gb() -> int:
    return (4 * GB // (16 * _kvb(BELGAVI["model"]))) // _blocks(BELGAVI_TOKENS)


def _swap_space_blocks() -> int:
    return V0_SWAP_SPACE // (16 * _kvb(BELGAVI["model"]))


def _band_text(tokens: int, model: str, gpu: str, cost: CostModel | None = None,
               block_size: int = 16) -> str:
    low, mid, high = ratio_band(tokens, model, gpu, cost, block_size=block_size)
    return f"recompute / swap is {mid:.2f} in kvsim, {low:.2f} to {high:.2f} within its error"


def _block64() -> tuple[str, str]:
    v = verdict(BELGAVI_TOKENS, BELGAVI["model"], "h100-80gb", block_size=WHATIF_BLOCK)
    return v, (f"{v}: at {WHATIF_BLOCK}-token blocks "
               f"{_band_text(BELGAVI_TOKENS, BELGAVI['model'], 'h100-80gb', block_size=WHATIF_BLOCK)} "
               f"(at 16: {_band_text(BELGAVI_TOKENS, BELGAVI['model'], 'h100-80gb')}); a quarter "
               f"of the copies, but for an MHA model the bytes are most of a swap")


def _shared_link() -> tuple[str, str]:
    cost = CostModel(pcie_bytes_per_s=HALF_SHARED_LINK)
    v = verdict(BELGAVI_TOKENS, BELGAVI["model"], BELGAVI["gpu"], cost)
    return v, (f"{v}: over {HALF_SHARED_LINK / GB:.0f} GB/s "
               f"{_band_text(BELGAVI_TOKENS, BELGAVI['model'], BELGAVI['gpu'], cost)}; "
               f"a winner by a few percent inside a band that straddles 1 is no winner")


def _long_costs() -> tuple[float, float]:

    n, m = LONG_TOKENS, SEED001["model"]
    return _ms(recompute_time_s(n, m, "a100-80gb")), _ms(swap_round_trip_s(n, m, "a100-80gb"))


def _three_preemptions() -> tuple[float, str]:
    r, s = _long_costs()
    k = WHATIF_TIMES
    v = k * (r - s)
    return v, (f"{k} x ({r:.1f} - {s:.1f}) ms = {v:.1f} ms: V0 frees the CPU copy when it "
               f"swaps a request back in, so each preemption pays a round trip again")


def _one_preemption() -> float:
    r, s = _long_costs()
    return r - s


def _swap_pays_once() -> float:
    r, s = _long_costs()
    return WHATIF_TIMES * r - s


def _three_one_way() -> float:
    r, s = _long_costs()
    return WHATIF_TIMES * (r - s / 2)


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch03-swap-bytes",
        question=f"bytes one swap-out of a {EX_TOKENS:,}-token Llama-3.1-8B request moves "
                 f"(16-token blocks)",
        kind="int", unit="bytes", solve=_swap_bytes, derive=True,
        hint="whole blocks of 16 tokens x 128 KiB per token, one way",
        traps=((lambda: EX_TOKENS * _kvb("llama-3.1-8b"),
                "a swap moves whole blocks: round the tokens up to a multiple of 16"),
               (lambda: 2 * _swap_bytes()[0],
                "that is the round trip; the question asks for one swap-out"),
               (_swap_bytes_7b,
                "that is Llama-2-7B's 0.5 MiB per token, the chapter's example; Llama-3.1-8B's "
                "8 KV heads cost a quarter of it"),
               (lambda: _swap_bytes()[0] / 2**20,
                "that is in MiB; the question asks bytes"),
               (_swap_bytes_decimal_kib,
                "a KiB is 1,024 bytes: 128 KiB is 131,072 B, not 128,000")),
    ),
    Exercise(
        id="ch03-copies",
        question=f"block copies one swap-out of that {EX_TOKENS:,}-token request issues",
        kind="int", unit="copies", solve=_copies, derive=True,
        hint="one copy per block, per layer, for K and for V (eq-swap)",
        traps=((lambda: _copies()[0] // 2,
                "every layer keeps a key block AND a value block: times 2"),
               (lambda: EX_TOKENS * 32 * 2,
                "a copy moves a whole block of one layer's K or V, not one token"),
               (lambda: 2 * _blocks(EX_TOKENS),
                "each layer keeps its own blocks: times the 32 layers"),
               (lambda: 2 * _copies()[0],
                "that counts the swap-in too; the question asks for one swap-out")),
    ),
    Exercise(
        id="ch03-a100-round-trip",
        question=f"{LONG_TOKENS:,} tokens of Llama-3.1-8B swapped out and back in on an A100, in ms",
        kind="float", unit="ms", solve=_a100_round_trip, rel_tol=0.02, derive=True,
        hint="eq-swap for each direction: the bytes over the A100's 25 GB/s plus blocks x layers "
             "x 2 copies at 3 us each; a round trip is out and back in",
        traps=((_a100_round_trip_nominal,
                "that is the seed's method: 32 GB/s nominal and no per-copy cost; use the A100's "
                "effective 25 GB/s and the copies"),
               (lambda: _a100_round_trip()[0] / 2,
                "that is one way; out and back in is twice it"),
               (_a100_round_trip_no_copies,
                "the bytes are right; add blocks x layers x 2 copies at 3 us each"),
               (_a100_round_trip_double_copies,
                "the copies are counted twice: each direction issues blocks x layers x 2 copies, "
                "so the round trip has twice that, not four times"),
               (lambda: _a100_round_trip()[0] / 1e3,
                "that is in seconds; the answer is in milliseconds")),
    ),
    Exercise(
        id="ch03-shared-link",
        question=f"Belgavi's A40 shares its PCIe link: {HALF_SHARED_LINK / GB:.0f} GB/s effective. "
                 f"For a {BELGAVI_TOKENS:,}-token victim, which mode costs less: 'swap', "
                 f"'recompute', or is it {CHOICES[2]!r}?",
        kind="choice", unit="a choice", options=CHOICES, solve=_shared_link,
        hint="compare kvsim.engine.uncertainty.ratio_band with 1 at that link "
             "(CostModel(pcie_bytes_per_s=...)): a winner needs the whole band on one side",
        traps=((lambda: "swap",
                "kvsim's own ratio is barely above 1; its measured error and the link's range "
                "put the band on both sides of 1"),
               (lambda: "recompute",
                "at that link the copies take about as long as the prefill; look at the band, "
                "not only kvsim's ratio")),
    ),
    Exercise(
        id="ch03-swap-space",
        question="Belgavi's 1,100-token requests that V0's default 4 GiB swap space holds at once",
        kind="int", unit="requests", solve=_swap_space_requests, derive=True,
        hint="swap space in blocks (4 GiB / (16 x 0.5 MiB)), divided by the blocks of one request",
        traps=((_swap_space_gb, "--swap-space counts GiB (2**30 bytes), not GB"),
               (_swap_space_blocks, "that is the swap space in blocks; divide by a request's "
                                    "blocks"),
               (_swap_space_rounded_up,
                "round down: a request whose blocks do not all fit cannot be swapped out")),
    ),
    Exercise(
        id="ch03-whatif-block-64",
        question=f"On the H100 (its own link), recompute is cheaper for Belgavi's "
                 f"{BELGAVI_TOKENS:,}-token request at 16-token blocks. With "
                 f"{WHATIF_BLOCK}-token blocks, which mode costs less: 'swap', 'recompute', or "
                 f"is it {CHOICES[2]!r}?",
        kind="choice", unit="a choice", options=CHOICES, solve=_block64,
        hint=f"kvsim.engine.uncertainty.ratio_band(..., block_size={WHATIF_BLOCK}): fewer "
             f"copies, the same bytes",
        traps=((lambda: "swap",
                "larger blocks cut the copies, but Llama-2-7B moves 0.5 MiB per token: the bytes "
                "are most of its swap, and the H100's compute is fast"),
               (lambda: CHOICES[2],
                "the band moves up, but its top stays below 1")),
    ),
    Exercise(
        id="ch03-whatif-three-preemptions",
        question=f"time lost that swap saves over recompute when a {LONG_TOKENS:,}-token "
                 f"Llama-3.1-8B request is preempted three times on an A100, in ms",
        kind="float", unit="ms", solve=_three_preemptions, rel_tol=0.02, derive=True,
        hint="each preemption pays a recompute or a swap round trip: three times their "
             "difference",
        traps=((_one_preemption, "that is one preemption; each of the three pays again"),
               (_swap_pays_once,
                "swap does not pay once: V0 frees the CPU copy at swap-in, so every preemption "
                "copies out and back in again"),
               (_three_one_way,
                "a preempted request's swap costs a round trip, out and back in, not one way"),
               (lambda: _three_preemptions()[0] / 1e3,
                "that is in seconds; the answer is in milliseconds")),
    ),
]


# ----------------------------------------------------------------------- predictions

def _predict_copies() -> tuple[int, str]:

    layers, blocks = get_model(BELGAVI["model"]).kv_layers, _blocks(BELGAVI_TOKENS)
    n = transfer_copies(blocks, layers)
    return n, (f"{blocks} blocks x {layers} layers x 2 = {n:,} copies one way, each a few "
               f"microseconds whatever its size")


def _predict_recompute() -> tuple[float, str]:
    t = _a40_recompute()
    return t, (f"one prefill step of {BELGAVI_TOKENS:,} tokens on the calibrated A40 (every "
               f"weight read once, the matmuls, quadratic attention): {t / BELGAVI_TOKENS:.3f} "
               f"ms per token, near the seeds' 0.12")


def h100_crossings() -> list[int]:
    """Where recompute and swap change order for Llama-3.1-8B on the H100 (its 50 GB/s, 16-token blocks)."""

    return crossover_tokens("llama-3.1-8b", "h100-80gb", min_tokens=256, max_tokens=65_536)


def _predict_crossover() -> tuple[int, str]:
    first, *rest = h100_crossings()
    after = f"; swap wins again from {rest[0]:,} tokens (quadratic attention)" if rest else ""
    unsure = uncertain_lengths("llama-3.1-8b", "h100-80gb", min_tokens=256)[0]
    return first, (f"below {first:,} tokens a recompute's fixed cost (every weight read once) "
                   f"exceeds the copies{after}; within kvsim's error band the first crossing "
                   f"could lie anywhere from {unsure[0]:,} to {unsure[1]:,}")


def block_study_ratio(block_size: int = 16) -> float:
    """kvsim's recompute / swap-round-trip ratio in the PagedAttention block-size study."""

    m, g, n = STUDY["model"], STUDY["gpu"], STUDY["tokens"]
    return recompute_time_s(n, m, g) / swap_round_trip_s(n, m, g, block_size=block_size)


def _predict_block_ratio() -> tuple[float, str]:
    r = block_study_ratio(16)
    return r, (f"recompute takes {r:.2f} times the swap round trip at 16-token blocks in kvsim "
               f"(the paper measured at most about 1.2): its PCIe copies run at a clean 25 GB/s")


def _predict_slow_link() -> tuple[float, str]:

    m = get_model(BELGAVI["model"])
    t = _ms(swap_time_s(SLOW_LINK_TOKENS, _kvb(m), SHARED_LINK, kv_layers=m.kv_layers,
                        copy_overhead_s=3e-6))
    return t, (f"{SLOW_LINK_TOKENS:,} tokens x 0.5 MiB over 4 GB/s plus the copies: every running "
               f"stream waits that long for one swap-out, and as long again for the swap-in")


def rescued_shares() -> list[float]:
    """V1 with the prefix cache on the slow-link traffic: the share of resume work the cache held, per seed."""

    out = []
    for seed in SEEDS:
        s = run_scenario("mission-2-slow-pcie", seed=seed, engine="v1",
                         preemption_mode="recompute", enable_prefix_caching=True,
                         pcie_bytes_per_s=None).summary()
        out.append(metric(s, "recompute_rescued_share"))
    return out


def _predict_rescued() -> tuple[float, str]:
    shares = sorted(rescued_shares())
    med = 100 * shares[len(shares) // 2]
    return med, (f"median over {len(shares)} seeds ({100 * shares[0]:.0f}-{100 * shares[-1]:.0f}%):"
                 f" a resumed request finds its own full blocks until new requests take them")


PREDICTIONS: list[Prediction] = [
    Prediction(id="ch03-predict-copies", unit="copies",
               question="block copies of swapping out Belgavi's 1,100-token request",
               solve=_predict_copies),
    Prediction(id="ch03-predict-recompute", unit="ms",
               question="recomputing those 1,100 tokens on the A40", solve=_predict_recompute),
    Prediction(id="ch03-predict-crossover", unit="tokens",
               question="on the H100, the length from which recompute costs less than a swap of "
                        "Llama-3.1-8B", solve=_predict_crossover, rel_tol=0.15),
    Prediction(id="ch03-predict-block-ratio", unit="x",
               question="recompute / swap round trip at 16-token blocks in the block-size study",
               solve=_predict_block_ratio),
    Prediction(id="ch03-predict-slow-link", unit="ms",
               question="how long one swap-out of a 1,300-token request over a 4 GB/s link "
                        "freezes every stream", solve=_predict_slow_link,
               rel_tol=0.05),   # the bytes alone (172 ms, copies forgotten) are 8% short
    Prediction(id="ch03-predict-rescued", unit="%",
               question="the share of a resumed request's tokens it finds still cached under V1",
               solve=_predict_rescued, rel_tol=0.15),
]
# the host-tier section's (kvsim.book.exercises.ch03_tier), in the chapter's order
EXERCISES[-2:-2] = TIER_EXERCISES
PREDICTIONS += TIER_PREDICTIONS
