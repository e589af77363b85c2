/* Every exercise's and prediction's check, computed by kvsim.book.exercises:
 * written by scripts/site_data.py (kvsim.book.checks_site); do not edit. */
window.kvbookChecksData = {
 "exercises": {
  "ch01-blocks-held": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 91,
   "hint": "a request of L tokens holds ceil(L / block_size) blocks; L is prompt plus answer",
   "kind": "int",
   "question": "KV blocks of 16 that hold 850 + 600 tokens of cache",
   "rel_tol": 0.0,
   "traps": [
    [
     90,
     "a partly filled last block is still a whole block: round up"
    ],
    [
     38,
     "the prompt's tokens stay in the cache too: L is prompt plus answer"
    ],
    [
     69,
     "that is today's 850 + 250; the question has 600-token answers"
    ],
    [
     92,
     "the answer continues in the prompt's last block: round up the sum once, not each part"
    ],
    [
     1456,
     "that is in token slots; the question asks blocks of 16"
    ]
   ],
   "unit": "blocks",
   "why": "ceil(1,450 / 16) = 91; the last block has 6 empty slots but is held whole"
  },
  "ch01-fp8-tokens": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 55536,
   "hint": "FP8 stores one byte a number, so by eq-kv-bytes a token costs half: the same pool holds twice the blocks vLLM logs (its null block aside), 16 tokens each",
   "kind": "int",
   "question": "tokens in the Belgavi KV pool with an FP8 cache, from its blocks in fp16",
   "rel_tol": 0.005,
   "traps": [
    [
     27760,
     "that is the 16-bit pool; with FP8 a token costs half the bytes, so the same pool holds more tokens"
    ],
    [
     58258.692508,
     "that is the decimal reading (0.25 MB per token); a token costs 0.25 MiB = 262,144 B"
    ],
    [
     3471,
     "that is in blocks; the question asks tokens, 16 to a block"
    ],
    [
     13880.0,
     "FP8 halves the bytes per token, not the tokens: the same pool holds more of them, not fewer"
    ]
   ],
   "unit": "tokens",
   "why": "3,471 blocks of 16 = 55,536 tokens at 262,144 B each, twice the 16-bit pool"
  },
  "ch01-gqa-bytes": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 196608,
   "hint": "2 (K and V) x layers x KV heads x head_dim x 2 bytes",
   "kind": "int",
   "question": "KV cache bytes per token of Qwen2.5-14B (48 layers, 40 query heads, 8 KV heads of 128, bf16)",
   "rel_tol": 0.0,
   "traps": [
    [
     98304,
     "that is half the answer: every token stores a key AND a value"
    ],
    [
     983040,
     "you used the attention (query) heads; the cache stores only the KV heads (GQA)"
    ],
    [
     192.0,
     "that is the answer in KiB, the Predict box's unit; the question asks bytes, and a KiB is 1,024 of them"
    ],
    [
     4096,
     "that is one layer's cache; every layer keeps its own keys and values"
    ]
   ],
   "unit": "bytes",
   "why": "2 x 48 layers x 8 KV heads x 128 x 2 B = 196,608 B (192 KiB) per token; the 40 query heads share the 8 KV heads"
  },
  "ch01-max-num-seqs": {
   "abs_tol": 1.0,
   "between": null,
   "derive": true,
   "expected": 149,
   "hint": "FP8 halves a block's bytes, so the pool holds twice the blocks (V1's null block aside); by eq-requests divide them by the blocks of one p95 request, prompt plus answer, and round down",
   "kind": "int",
   "question": "max_num_seqs for Llama-3.1-8B on an H100 80 GB at 0.90 with an FP8 cache, p95 6k, from the pool's blocks in bf16",
   "rel_tol": 0.0,
   "traps": [
    [
     74,
     "that is the bf16 figure; the question asks for an FP8 cache"
    ],
    [
     1024,
     "that is vLLM V1's default on an H100, the cap that never binds; size max_num_seqs from the capacity at the p95 length"
    ],
    [
     448,
     "that is how many p95 prompts fit, where admission stops; a running sequence needs room for its whole request, prompt plus answer"
    ]
   ],
   "unit": "sequences",
   "why": "56,045 blocks // 375 per request = 149, twice the 16-bit figure"
  },
  "ch01-mla-bytes": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 31104,
   "hint": "layers x (kv_lora_rank + qk_rope_head_dim) x 2 bytes",
   "kind": "int",
   "question": "KV cache bytes per token of DeepSeek-V2-Lite (MLA: 27 layers, kv_lora_rank 512, qk_rope_head_dim 64, bf16)",
   "rel_tol": 0.0,
   "traps": [
    [
     62208,
     "MLA stores one latent per layer, not a K and a V: no factor 2"
    ],
    [
     497664,
     "the latent is shared by all the heads: no head count"
    ],
    [
     27648,
     "each layer also caches the small positional key (qk_rope_head_dim numbers) beside the latent"
    ],
    [
     70272,
     "that is DeepSeek-V3's, the chapter's example with its 61 layers; use DeepSeek-V2-Lite's layers"
    ],
    [
     30.375,
     "that is in KiB; the question asks bytes, and a KiB is 1,024 of them"
    ]
   ],
   "unit": "bytes",
   "why": "27 layers x (512 + 64) x 2 B = 31,104 B per token: one latent per layer stands for the keys and values of all 16 heads"
  },
  "ch01-pool-gib": {
   "abs_tol": 0.02,
   "between": null,
   "derive": true,
   "expected": 9.130503845401108,
   "hint": "by eq-kv-pool: the utilisation times the memory CUDA reports, minus the weights and the measured reserve, all in GiB (2**30 bytes)",
   "kind": "float",
   "question": "the Belgavi KV pool in GiB at gpu_memory_utilization 0.50, from the memory CUDA reports, the weights and the reserve in GiB",
   "rel_tol": 0.0,
   "traps": [
    [
     9.803803853,
     "that is the pool in GB (10**9 bytes); a GiB is 2**30 bytes"
    ],
    [
     11.30367406255876,
     "that scales the 0.60 pool by 0.50 / 0.60; the weights and the reserve do not shrink, so the pool loses the whole 0.10 of the GPU"
    ],
    [
     13.564408875070512,
     "that is the pool at Belgavi's 0.60, the chapter's; at 0.50 vLLM may use a tenth of the card less"
    ],
    [
     9.618247985839844,
     "subtract the measured reserve (activations, the CUDA context) as well as the weights"
    ]
   ],
   "unit": "GiB",
   "why": "9,803,803,853 B / 2**30 = 9.13 GiB (9.80 GB)"
  },
  "ch01-whatif-block-size": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 24,
   "hint": "a block of 32 tokens takes twice the bytes, so the same pool has half the blocks (V1's null block aside); each request rounds up to whole blocks of 32",
   "kind": "int",
   "question": "concurrent Belgavi requests (850 + 250) with block_size 32 instead of 16",
   "rel_tol": 0.0,
   "traps": [
    [
     25,
     "that is the figure for blocks of 16; with blocks of 32 the pool has half as many blocks and each request rounds up to a multiple of 32 tokens"
    ],
    [
     50,
     "a block of 32 holds twice the tokens, but the pool has half as many blocks"
    ],
    [
     49,
     "the pool's bytes do not change, so blocks twice as large are half as many: halve the block count before dividing"
    ]
   ],
   "unit": "requests",
   "why": "867 blocks of 32 // ceil(1,100 / 32) = 35 per request = 24: a request now holds 1,120 slots against 1,104 with blocks of 16, so the last, part-empty block wastes more"
  },
  "ch01-whatif-util": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 35,
   "hint": "by eq-kv-pool the extra 0.12 of the card all goes to the pool: turn it into blocks of 8 MiB, add them to today's, then divide by a request's blocks",
   "kind": "int",
   "question": "concurrent Belgavi requests (850 + 250) at gpu_memory_utilization 0.72",
   "rel_tol": 0.0,
   "traps": [
    [
     30,
     "that scales the whole capacity by 0.72 / 0.60; only the KV pool grows, the weights and the reserve stay the same size"
    ],
    [
     25,
     "that is the capacity at 0.60; at 0.72 the pool gains 0.12 of the card"
    ],
    [
     9,
     "that counts only the new blocks; the pool keeps the ones it had at 0.60"
    ]
   ],
   "unit": "requests",
   "why": "0.12 more of 44.34 GiB is 5.32 GiB, all of it KV (the weights and reserve do not grow): 681 more blocks of 8 MiB, 2,416 blocks // 69 = 35"
  },
  "ch02-guaranteed-slots": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 11,
   "hint": "the pool's blocks divided by the blocks of prompt + max_tokens, rounded up per request",
   "kind": "int",
   "question": "how many Belgavi requests (850-token prompts) guaranteed admission runs at once with max_tokens 1,500",
   "rel_tol": 0.0,
   "traps": [
    [
     11.802721088435375,
     "a request runs whole or not at all: the answer is whole requests, the quotient rounded down"
    ],
    [
     12,
     "that rounds the quotient up: the last request's reservation does not fit whole, so round down"
    ],
    [
     25,
     "that uses the real answer (250 tokens); guaranteed admission reserves max_tokens"
    ],
    [
     32,
     "that reserves only the prompt, which is what optimistic admission does"
    ]
   ],
   "unit": "requests",
   "why": "1,735 blocks // ceil((850 + 1,500) / 16) = 1,735 // 147 = 11"
  },
  "ch02-small-pool": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 10,
   "hint": "the prompts leave one block free; find the token that needs each request's next block, and the step that writes its KV (the prefill is step 1)",
   "kind": "int",
   "question": "the engine step at which the stepper's five requests meet their first preemption on a 16-block pool",
   "rel_tol": 0.0,
   "traps": [
    [
     26,
     "that is the 20-block pool of the text; with 16 blocks only one is free after the prompts"
    ],
    [
     9,
     "one step early: step 1 prefills the prompt and emits the first token, and a token's KV is written in the step after it is sampled"
    ],
    [
     11,
     "one step late: the free block goes to the first request in that step, and the next request, finding none, preempts in the same step"
    ],
    [
     49,
     "that is the token that needs the new block; the question asks the engine step that writes its KV"
    ]
   ],
   "unit": "step",
   "why": "15 of 16 blocks go to the prompts; token 49 needs each request's next block, and its KV is written at step 49 - 40 + 1 = 10 (the prefill is step 1): five requests need a block, one is free"
  },
  "ch02-thrash-budget": {
   "abs_tol": 0.0,
   "between": null,
   "derive": false,
   "expected": 574571,
   "hint": "kvsim.run_scenario('thrash-loop', max_num_batched_tokens=1024) and read summary()['recomputed_tokens']",
   "kind": "int",
   "question": "prompt tokens recomputed in the thrash loop with max_num_batched_tokens=1024",
   "rel_tol": 0.001,
   "traps": [
    [
     889532,
     "that is the default budget (2,048); pass max_num_batched_tokens=1024"
    ],
    [
     574.571,
     "that is in thousands of tokens; the answer is in tokens"
    ],
    [
     292521,
     "that is the chapter's 512-token budget; the question sets 1,024"
    ],
    [
     56,
     "that counts preemptions; the question asks the prompt tokens they recompute"
    ]
   ],
   "unit": "tokens",
   "why": "a 1,024-token budget lets fewer long prompts be half prefilled at once, so fewer are preempted and restarted (56 preemptions), but it does not end the loop"
  },
  "ch02-watermark-blocks": {
   "abs_tol": 1.0,
   "between": null,
   "derive": true,
   "expected": 564,
   "hint": "int(watermark x num_gpu_blocks), with the load test's own pool",
   "kind": "int",
   "question": "blocks a watermark of 0.02 holds back at admission on the H100 load test's pool",
   "rel_tol": 0.0,
   "traps": [
    [
     9024,
     "that is in tokens; the watermark counts blocks of 16"
    ],
    [
     560,
     "that is chapter 1's H100 pool, sized for vLLM's default max_num_seqs; the load test caps it at 256, so profiling reserves less and its pool has more blocks"
    ],
    [
     282,
     "that is V0's fixed 1%; the question sets watermark=0.02"
    ],
    [
     27646,
     "that is what admission may fill; the watermark is the share it keeps free"
    ]
   ],
   "unit": "blocks",
   "why": "int(0.02 x 28,210 blocks) = 564 blocks held back at admission"
  },
  "ch02-whatif-fp8": {
   "derive": false,
   "expected": "preemption",
   "hint": "chapter 1 sized the FP8 pool in requests of the p95 length: compare it with the 240 users, then with the cap of 256",
   "kind": "choice",
   "options": [
    "preemption",
    "queueing",
    "neither"
   ],
   "question": "with the FP8 cache that fixes 120 users, the traffic doubles to 240 users: which of the chapter's targets (5 preemptions per 1,000, p95 TTFT 2 s) does it miss: 'preemption', 'queueing' or 'neither'?",
   "traps": [
    [
     "neither",
     "the FP8 cache doubled the pool, but the users doubled too: chapter 1's FP8 capacity at the p95 length is below the users in flight"
    ],
    [
     "queueing",
     "a request queues in the engine only when the pool or max_num_seqs has no room for it; the cap is 256, so the pool runs dry first"
    ]
   ],
   "unit": "a choice",
   "why": "preemption: the FP8 pool holds 149 requests of the p95 length, fewer than the 240 users keep in flight, and max_num_seqs 256 caps nothing, so the pool runs dry before anything queues: 282 preemptions per 1,000 and a p95 TTFT of 11.1 s (median over 3 seeds)"
  },
  "ch02-whatif-users": {
   "derive": false,
   "expected": "flat",
   "hint": "what does the GPU do at 120 users already, and what does a preemption cost it? Check with kvsim.run_scenario('load-test-120', users=300)",
   "kind": "choice",
   "options": [
    "rises",
    "flat",
    "falls"
   ],
   "question": "at 300 users, the load test's goodput against 120 users: it 'rises', stays 'flat' (within 5%) or 'falls'?",
   "traps": [
    [
     "rises",
     "the GPU is already full at 120 users: the extra users wait in the queue or are preempted, they add no decode slots"
    ],
    [
     "falls",
     "that is the source's collapse; a recompute is a prefill, thousands of tokens per step, so the wasted work stays a small share"
    ]
   ],
   "unit": "a choice",
   "why": "flat: 3,932 tokens/s against 4,039 at 120 users (-2.6%, median over 3 seeds): past the knee the GPU is full, and a recompute is a cheap prefill, so the extra users only lengthen the queue and the preemption count"
  },
  "ch03-a100-round-trip": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 211.88050944,
   "hint": "eq-swap for each direction: the bytes over the A100's 25 GB/s plus blocks x layers x 2 copies at 3 us each; a round trip is out and back in",
   "kind": "float",
   "question": "6,144 tokens of Llama-3.1-8B swapped out and back in on an A100, in ms",
   "rel_tol": 0.02,
   "traps": [
    [
     50.331648,
     "that is the seed's method: 32 GB/s nominal and no per-copy cost; use the A100's effective 25 GB/s and the copies"
    ],
    [
     105.94025472,
     "that is one way; out and back in is twice it"
    ],
    [
     64.42450944,
     "the bytes are right; add blocks x layers x 2 copies at 3 us each"
    ],
    [
     359.33650944000004,
     "the copies are counted twice: each direction issues blocks x layers x 2 copies, so the round trip has twice that, not four times"
    ],
    [
     0.21188050944,
     "that is in seconds; the answer is in milliseconds"
    ]
   ],
   "unit": "ms",
   "why": "2 x (6,144 x 128 KiB / 25 GB/s + 384 blocks x 32 layers x 2 x 3 us) = 211.9 ms: the copies' fixed cost adds more than the bytes"
  },
  "ch03-copies": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 8448,
   "hint": "one copy per block, per layer, for K and for V (eq-swap)",
   "kind": "int",
   "question": "block copies one swap-out of that 2,100-token request issues",
   "rel_tol": 0.0,
   "traps": [
    [
     4224,
     "every layer keeps a key block AND a value block: times 2"
    ],
    [
     134400,
     "a copy moves a whole block of one layer's K or V, not one token"
    ],
    [
     264,
     "each layer keeps its own blocks: times the 32 layers"
    ],
    [
     16896,
     "that counts the swap-in too; the question asks for one swap-out"
    ]
   ],
   "unit": "copies",
   "why": "132 blocks x 32 layers x 2 (K and V) = 8,448 copies each way"
  },
  "ch03-shared-link": {
   "derive": false,
   "expected": "within error",
   "hint": "compare kvsim.engine.uncertainty.ratio_band with 1 at that link (CostModel(pcie_bytes_per_s=...)): a winner needs the whole band on one side",
   "kind": "choice",
   "options": [
    "swap",
    "recompute",
    "within error"
   ],
   "question": "Belgavi's A40 shares its PCIe link: 10 GB/s effective. For a 1,100-token victim, which mode costs less: 'swap', 'recompute', or is it 'within error'?",
   "traps": [
    [
     "swap",
     "kvsim's own ratio is barely above 1; its measured error and the link's range put the band on both sides of 1"
    ],
    [
     "recompute",
     "at that link the copies take about as long as the prefill; look at the band, not only kvsim's ratio"
    ]
   ],
   "unit": "a choice",
   "why": "within error: over 10 GB/s recompute / swap is 1.03 in kvsim, 0.82 to 1.14 within its error; a winner by a few percent inside a band that straddles 1 is no winner"
  },
  "ch03-swap-bytes": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 276824064,
   "hint": "whole blocks of 16 tokens x 128 KiB per token, one way",
   "kind": "int",
   "question": "bytes one swap-out of a 2,100-token Llama-3.1-8B request moves (16-token blocks)",
   "rel_tol": 0.0,
   "traps": [
    [
     275251200,
     "a swap moves whole blocks: round the tokens up to a multiple of 16"
    ],
    [
     553648128,
     "that is the round trip; the question asks for one swap-out"
    ],
    [
     1107296256,
     "that is Llama-2-7B's 0.5 MiB per token, the chapter's example; Llama-3.1-8B's 8 KV heads cost a quarter of it"
    ],
    [
     264.0,
     "that is in MiB; the question asks bytes"
    ],
    [
     270336000,
     "a KiB is 1,024 bytes: 128 KiB is 131,072 B, not 128,000"
    ]
   ],
   "unit": "bytes",
   "why": "ceil(2,100 / 16) = 132 blocks x 16 tokens x 131,072 B = 276,824,064 B each way: a swap moves whole blocks"
  },
  "ch03-swap-space": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 7,
   "hint": "swap space in blocks (4 GiB / (16 x 0.5 MiB)), divided by the blocks of one request",
   "kind": "int",
   "question": "Belgavi's 1,100-token requests that V0's default 4 GiB swap space holds at once",
   "rel_tol": 0.0,
   "traps": [
    [
     6,
     "--swap-space counts GiB (2**30 bytes), not GB"
    ],
    [
     512,
     "that is the swap space in blocks; divide by a request's blocks"
    ],
    [
     8,
     "round down: a request whose blocks do not all fit cannot be swapped out"
    ]
   ],
   "unit": "requests",
   "why": "4 GiB / 8,388,608 B per block = 512 blocks; 512 // 69 blocks per request = 7; the next victim stops the whole V0 engine"
  },
  "ch03-tier-load": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 20.80374784,
   "hint": "the tier holds full 16-token blocks only; their bytes (0.5 MiB a token) over 25 GB/s, one way: eq-swap's first term",
   "kind": "float",
   "question": "loading a 1,000-token Llama-2-7B document from the host tier on the A40 (25 GB/s), in ms",
   "rel_tol": 0.005,
   "traps": [
    [
     21.13929216,
     "the last, partial block is not in the tier: count full blocks only (1,000 // 16)"
    ],
    [
     20.97152,
     "the tier moves whole blocks: count full 16-token blocks only"
    ],
    [
     41.60749568,
     "a load is one way, from CPU memory to the GPU, not a round trip"
    ],
    [
     19.375,
     "25 GB/s is 25 x 10^9 bytes a second, not 25 GiB/s"
    ],
    [
     0.02080374784,
     "that is in seconds; the answer is in milliseconds"
    ]
   ],
   "unit": "ms",
   "why": "1,000 // 16 = 62 full blocks (the tier stores no partial block) x 16 x 0.5 MiB = 520,093,696 B over 25 GB/s = 20.8 ms, one way, with no per-copy cost counted; prefilling the document takes 135 ms"
  },
  "ch03-whatif-block-64": {
   "derive": false,
   "expected": "recompute",
   "hint": "kvsim.engine.uncertainty.ratio_band(..., block_size=64): fewer copies, the same bytes",
   "kind": "choice",
   "options": [
    "swap",
    "recompute",
    "within error"
   ],
   "question": "On the H100 (its own link), recompute is cheaper for Belgavi's 1,100-token request at 16-token blocks. With 64-token blocks, which mode costs less: 'swap', 'recompute', or is it 'within error'?",
   "traps": [
    [
     "swap",
     "larger blocks cut the copies, but Llama-2-7B moves 0.5 MiB per token: the bytes are most of its swap, and the H100's compute is fast"
    ],
    [
     "within error",
     "the band moves up, but its top stays below 1"
    ]
   ],
   "unit": "a choice",
   "why": "recompute: at 64-token blocks recompute / swap is 0.87 in kvsim, 0.66 to 0.92 within its error (at 16: recompute / swap is 0.55 in kvsim, 0.44 to 0.58 within its error); a quarter of the copies, but for an MHA model the bytes are most of a swap"
  },
  "ch03-whatif-three-preemptions": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 656.2473722141127,
   "hint": "each preemption pays a recompute or a swap round trip: three times their difference",
   "kind": "float",
   "question": "time lost that swap saves over recompute when a 6,144-token Llama-3.1-8B request is preempted three times on an A100, in ms",
   "rel_tol": 0.02,
   "traps": [
    [
     218.74912407137091,
     "that is one preemption; each of the three pays again"
    ],
    [
     1080.0083910941128,
     "swap does not pay once: V0 frees the CPU copy at swap-in, so every preemption copies out and back in again"
    ],
    [
     974.0681363741128,
     "a preempted request's swap costs a round trip, out and back in, not one way"
    ],
    [
     0.6562473722141127,
     "that is in seconds; the answer is in milliseconds"
    ]
   ],
   "unit": "ms",
   "why": "3 x (430.6 - 211.9) ms = 656.2 ms: V0 frees the CPU copy when it swaps a request back in, so each preemption pays a round trip again"
  },
  "ch04-blocks-held": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 1691,
   "hint": "eq-gauge: the gauge is the share of the pool's blocks held, so multiply it by the pool's blocks and round to a whole block",
   "kind": "int",
   "question": "KV blocks the gauge counts as used at minute 20 of the incident",
   "rel_tol": 0.0,
   "traps": [
    [
     27056,
     "that is in tokens; the gauge counts blocks of 16"
    ],
    [
     1735,
     "that is the whole pool, all of it held at minute 22 (the text's instant); at minute 20 the gauge reads less than 1"
    ],
    [
     1690,
     "the product is a whole number of blocks that the quoted gauge rounds: round to the nearest block, do not cut the decimals off"
    ],
    [
     44,
     "that is the free blocks; the gauge counts the blocks requests hold"
    ],
    [
     169093.1,
     "the gauge is a fraction from 0 to 1, despite the _perc in its name"
    ]
   ],
   "unit": "blocks",
   "why": "0.9746 x 1,735 blocks = 1,691"
  },
  "ch04-bucket-edge": {
   "abs_tol": 1e-09,
   "between": null,
   "derive": false,
   "expected": 20.0,
   "hint": "read kvsim.observe.metrics.ITL_BUCKETS (copied from vllm/v1/metrics/buckets.py)",
   "kind": "float",
   "question": "the smallest bucket edge above 10 s in vLLM V1's inter-token latency histogram",
   "rel_tol": 0.0,
   "traps": [
    [
     15.0,
     "there is no le=\"15\" bucket: a query on it returns nothing"
    ],
    [
     10.0,
     "that edge is 10 s itself; the question asks the smallest one above it"
    ],
    [
     20000.0,
     "that is in milliseconds; the le labels are in seconds"
    ]
   ],
   "unit": "s",
   "why": "V1's inter-token buckets run ... 7.5, 10.0, 20, ...: there is no le=\"15\""
  },
  "ch04-p99-itl": {
   "abs_tol": 0.5,
   "between": null,
   "derive": true,
   "expected": 145.7,
   "hint": "the p99 is the gap at rank 0.99 x the +Inf count: find the bucket whose cumulative count first reaches that rank, and interpolate linearly inside it",
   "kind": "float",
   "question": "p99 inter-token latency of the whole incident, in ms, from the histogram",
   "rel_tol": 0.0,
   "traps": [
    [
     41.39516433759075,
     "that is the mean (sum / count); the tail needs the buckets"
    ],
    [
     0.1457,
     "that is in seconds; the answer is in ms"
    ],
    [
     150.0,
     "that is the bucket's upper edge; histogram_quantile interpolates linearly inside the bucket"
    ],
    [
     100.0,
     "that is the bucket's lower edge; the rank lies partway up the bucket: interpolate"
    ]
   ],
   "unit": "ms",
   "why": "the rank 0.99 x 693,852 = 686,913 falls in the bucket (0.1, 0.15] s, whose cumulative count goes from 657,838 to 689,634: interpolated linearly, 145.7 ms, as histogram_quantile gives"
  },
  "ch04-per-1k": {
   "abs_tol": 0.5,
   "between": null,
   "derive": true,
   "expected": 58.8,
   "hint": "1,000 x vllm:num_preemptions_total / the sum of vllm:request_success_total over its finished_reason labels, both read at the last scrape",
   "kind": "float",
   "question": "preemptions per 1,000 finished requests over the whole incident, from the final counters",
   "rel_tol": 0.0,
   "traps": [
    [
     168.0,
     "that is the preemption count itself; divide by the finished requests and multiply by 1,000"
    ],
    [
     0.0588,
     "that is per request; multiply by 1,000"
    ],
    [
     5.88,
     "that is per 100 requests, a percentage; the question asks per 1,000"
    ],
    [
     170.1,
     "that is the dashboard's peak, over a 10-minute window; the question asks the whole incident, from the final counters"
    ]
   ],
   "unit": "per 1,000 requests",
   "why": "1,000 x 168 preemptions / 2,857 finished requests"
  },
  "ch04-threshold": {
   "abs_tol": 0.0,
   "between": [
    137.8,
    228.7
   ],
   "derive": false,
   "expected": 183.25,
   "hint": "compare the healthy and the storm rows of the dashboard's itl_p99_ms column: the threshold must lie above the first and below the second",
   "kind": "float",
   "question": "a p99 inter-token latency threshold (ms) that fires in the storm and never in the healthy quarter hour",
   "rel_tol": 0.1,
   "traps": [
    [
     4403.0,
     "that is the longest single pause; a 5-minute p99 never gets near it, so the alert would never fire"
    ],
    [
     56.1,
     "that is the rush's worst 5-minute mean; the quiet minutes' p99 is already above it, so the alert would fire all day"
    ],
    [
     0.18325,
     "that is in seconds; the threshold is in ms"
    ]
   ],
   "unit": "ms",
   "why": "any threshold above the healthy quarter hour's worst 5-minute p99 (138 ms) and below the storm's (229 ms) separates them"
  },
  "ch04-whatif-fp8": {
   "abs_tol": 0.5,
   "between": null,
   "derive": false,
   "expected": 0,
   "hint": "kvsim.run_scenario('incident-day', kv_dtype='fp8').summary()['preemptions']",
   "kind": "int",
   "question": "preemptions in the incident with an FP8 KV cache",
   "rel_tol": 0.0,
   "traps": [
    [
     168,
     "that is the fp16 run; pass kv_dtype='fp8'"
    ],
    [
     84.0,
     "FP8 does not halve the preemptions: it doubles the pool; does the rush still fill it?"
    ],
    [
     58.8,
     "that is preemptions per 1,000 requests; the question asks the count"
    ]
   ],
   "unit": "preemptions",
   "why": "an FP8 cache holds twice the tokens: the lunch rush fits, and 0 requests are preempted"
  },
  "ch05-little": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 11.8,
   "hint": "Little's law: requests running = arrival rate x time each one runs",
   "kind": "float",
   "question": "the mean time a request spends in Belgavi's running batch (seed 5), from its mean running requests and the arrival rate",
   "rel_tol": 0.05,
   "traps": [
    [
     26.51380085521658,
     "that multiplies; divide the running requests by the rate"
    ],
    [
     11800.0,
     "that is in milliseconds; the answer is in seconds"
    ],
    [
     16.666666666666668,
     "that uses the requests that fit (eq-fit's ceiling); Little's law takes the mean number running, below it"
    ]
   ],
   "unit": "s",
   "why": "Little's law: 17.7 running / 1.5 requests per second = 11.8 s in the running batch"
  },
  "ch05-long-capacity": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 19,
   "hint": "eq-fit: the pool's blocks divided by the blocks of one 1,450-token request (rounded up), rounded down",
   "kind": "int",
   "question": "how many requests of 850 + 600 tokens fit Belgavi's pool at once",
   "rel_tol": 0.0,
   "traps": [
    [
     18.0,
     "that is the seed's envelope (the card's label read as decimal GB, a round reserve, 0.5 MB a token); use kvsim's pool as vLLM V1 budgets it on the A40"
    ],
    [
     25,
     "that is the old 250-token answers; the prompt change made them 600"
    ],
    [
     19.065934065934066,
     "a request runs whole or not at all: round the quotient down"
    ],
    [
     20,
     "that rounds the quotient up; the last request would not fit whole: round down"
    ]
   ],
   "unit": "requests",
   "why": "1,735 blocks // ceil(1,450 / 16) = 1,735 // 91 = 19"
  },
  "ch05-memory-back": {
   "abs_tol": 0.005,
   "between": null,
   "derive": true,
   "expected": 0.7,
   "hint": "eq-kv-pool solved for the utilisation: the blocks those requests need (and V1's null block) plus the weights and the reserve, over the memory CUDA reports, rounded up to the next hundredth",
   "kind": "float",
   "question": "the least gpu_memory_utilization (two decimals) at which Belgavi's pool holds as many 1,450-token requests as it held 1,100-token ones at 0.60",
   "rel_tol": 0.0,
   "traps": [
    [
     0.8,
     "scaling 0.60 by 1,450 / 1,100 grows the weights too; only the KV pool grows with the fraction"
    ],
    [
     0.69,
     "that rounds down, and the pool falls short of the last request: round up to the next hundredth"
    ],
    [
     0.41,
     "that is only the pool's share of the card; the weights and the reserve come out of the same fraction"
    ],
    [
     0.65,
     "that divides GiB by the card's 48 GB label; vLLM takes its share of the memory CUDA reports, in the same unit as the rest"
    ]
   ],
   "unit": "fraction of GPU memory",
   "why": "the weights and activations stay fixed, so only the pool grows with the fraction: 0.70 is the least that holds 25 requests of 1,450 tokens"
  },
  "ch05-spread-ratio": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 2.54,
   "hint": "the worst day's preemptions per 1,000 divided by the median day's, both from the chapter's ten days",
   "kind": "float",
   "question": "the worst of the chapter's ten days of normal traffic: its preemptions per 1,000 as a multiple of the median day's",
   "rel_tol": 0.02,
   "traps": [
    [
     2.221085600000166,
     "that divides by the mean; the chapter reports the median"
    ],
    [
     0.39370078740157477,
     "that is the median over the worst; the question asks the worst over the median"
    ],
    [
     96.23396112847735,
     "that is the difference; the question asks how many times the median"
    ],
    [
     254.0,
     "that is a percentage; the question asks a multiple"
    ]
   ],
   "unit": "times the median",
   "why": "the worst day has 159 preemptions per 1,000, the median day 63"
  },
  "ch05-swap-freeze": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 172.0,
   "hint": "round the victim up to blocks of 16, multiply by 0.5 MiB per token and divide by 4e9 bytes per second",
   "kind": "float",
   "question": "milliseconds one swap-out of a 1,300-token victim freezes every stream on mission 2's 4 GB/s link",
   "rel_tol": 0.005,
   "traps": [
    [
     160.1874828338623,
     "4 GB/s is 4e9 bytes per second, not 4 GiB/s"
    ],
    [
     344.0,
     "that is out and back in; the question asks one swap-out"
    ],
    [
     170.3936,
     "a swap moves whole blocks: round the 1,300 tokens up to whole blocks of 16"
    ]
   ],
   "unit": "ms",
   "why": "ceil(1,300 / 16) = 82 blocks = 1,312 tokens x 524,288 B / 4e9 B/s = 172 ms, during which no stream moves"
  },
  "ch05-whatif-rate": {
   "abs_tol": 0.5,
   "between": null,
   "derive": false,
   "expected": 322.8,
   "hint": "kvsim.run_scenario('belgavi-long', rate_per_s=1.2).summary()['preemptions_per_1k']",
   "kind": "float",
   "question": "preemptions per 1,000 requests in belgavi-long if traffic falls to 1.2 requests per second",
   "rel_tol": 0.0,
   "traps": [
    [
     268.7704026115343,
     "that is the 1.5 requests/s run; pass rate_per_s=1.2"
    ],
    [
     800.0,
     "that is per finished request, as a server counts; kvsim's preemptions_per_1k counts per request that arrived"
    ],
    [
     215.0163220892274,
     "that scales the 1.5 requests/s figure with the traffic; the server is still overloaded, so the cache stays pinned"
    ],
    [
     0.32280000000000003,
     "that is per request; multiply by 1,000"
    ]
   ],
   "unit": "per 1,000 requests",
   "why": "323 per 1,000: at 1.2 requests/s the server is still overloaded (at most 433 waiting), so the cache stays pinned and preempts as often, over fewer requests"
  },
  "ch06-a40-million": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 79.36507936507937,
   "hint": "eq-gpu-hours at the A40 FP16's rate, times the A40's price an hour",
   "kind": "float",
   "question": "dollars per million requests of the A40 with a 16-bit cache at its sustainable rate",
   "rel_tol": 0.01,
   "traps": [
    [
     158.73015873015873,
     "that is GPU-hours; multiply by the price an hour"
    ],
    [
     396.82539682539687,
     "that is the H100's price; this configuration runs on an A40"
    ],
    [
     55.55555555555556,
     "that is the best day's threshold; the SLO holds on every day only at the lowest"
    ]
   ],
   "unit": "dollars per million requests",
   "why": "1,000,000 / (3,600 × 1.75) × $0.50 = $79.37 per million requests"
  },
  "ch06-dollars-hour": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 2.0,
   "hint": "for each configuration, eq-replicas times its GPU's price an hour; take the least",
   "kind": "float",
   "question": "dollars an hour of the cheapest configuration at 10 requests/s",
   "rel_tol": 0.005,
   "traps": [
    [
     1.5384615384615385,
     "that pays for a fraction of a replica; replicas come whole (round up)"
    ],
    [
     2.5,
     "that is the H100 with FP8: one replica carries the load, but it is not the cheapest an hour"
    ],
    [
     42.73504273504273,
     "that is dollars per million requests; the question asks dollars an hour"
    ]
   ],
   "unit": "dollars an hour",
   "why": "the A40 FP8 needs 4 replicas at $0.50 an hour: $2.00 an hour"
  },
  "ch06-gpu-hours": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 85.47008547008546,
   "hint": "eq-gpu-hours: a million requests at r per second take 1,000,000 / r seconds; divide by 3,600 for hours",
   "kind": "float",
   "question": "GPU-hours per million requests of the A40 with an FP8 cache at its sustainable rate",
   "rel_tol": 0.01,
   "traps": [
    [
     5128.205128205128,
     "that is GPU-minutes: an hour has 3,600 seconds"
    ],
    [
     79.36507936507937,
     "that is the best day's threshold; the SLO holds on every day only at the lowest, the configuration's rate"
    ],
    [
     307692.3076923077,
     "that is GPU-seconds: divide by 3,600 for hours"
    ]
   ],
   "unit": "GPU-hours per million requests",
   "why": "1,000,000 / (3,600 × 3.25) = 85.5 GPU-hours per million requests"
  },
  "ch06-replicas": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 6,
   "hint": "eq-replicas: the target load over one replica's sustainable rate, rounded up",
   "kind": "int",
   "question": "replicas of the A40 with a 16-bit cache that carry 10 requests/s",
   "rel_tol": 0.0,
   "traps": [
    [
     5,
     "that rounds down: the last replica would run past its SLO; round up"
    ],
    [
     4,
     "that is the best day's threshold; plan on the rate every day holds"
    ],
    [
     18,
     "that multiplies; divide the target by one replica's rate"
    ]
   ],
   "unit": "replicas",
   "why": "⌈10 / 1.75⌉ = 6: a replica is whole"
  },
  "ch06-whatif-price": {
   "abs_tol": 0.0,
   "between": null,
   "derive": true,
   "expected": 27.77777777777778,
   "hint": "eq-gpu-hours at the H100 FP8's rate, times the new price",
   "kind": "float",
   "question": "what happens if the H100's price falls to $1.50 an hour: the H100 FP8's dollars per million requests",
   "rel_tol": 0.01,
   "traps": [
    [
     46.2962962962963,
     "that is at the old price of $2.50 an hour"
    ],
    [
     18.51851851851852,
     "that is GPU-hours; multiply by the price"
    ],
    [
     1666.6666666666667,
     "that uses minutes: an hour has 3,600 seconds"
    ]
   ],
   "unit": "dollars per million requests",
   "why": "1,000,000 / (3,600 × 15) × $1.50 = $27.78 per million requests"
  }
 },
 "format": "kvbook-checks",
 "predictions": {
  "ch01-predict-gqa": {
   "question": "KV cache per token of Llama-3.1-8B (32 layers, 8 KV heads of 128, bf16)",
   "rel_tol": 0.1,
   "unit": "KiB",
   "value": 128.0,
   "value_text": "128",
   "why": "2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B: the 32 query heads share 8 KV heads, a quarter of Llama-2-7B's 512 KiB"
  },
  "ch01-predict-h100": {
   "question": "how many p95 requests (2,000 + 4,000 tokens) of Llama-3.1-8B fit on an H100 at 0.90",
   "rel_tol": 0.1,
   "unit": "requests",
   "value": 74,
   "value_text": "74",
   "why": "28,022 blocks // 375 per request; vLLM V1's default max_num_seqs on this GPU is 1,024"
  },
  "ch01-predict-pool": {
   "question": "the Belgavi KV pool that vLLM V1 computes on a real A40 at 0.60",
   "rel_tol": 0.05,
   "unit": "GB",
   "value": 14.564673127,
   "value_text": "14.56",
   "why": "CUDA's 47.61 GB x 0.60 - 13.48 GB of weights - 0.52 GB measured reserve; the envelope's 13.3 GB assumes 48 GB and a 2 GB reserve"
  },
  "ch01-predict-requests": {
   "question": "how many 850 + 250-token requests fit in that pool at once",
   "rel_tol": 0.1,
   "unit": "requests",
   "value": 25,
   "value_text": "25",
   "why": "1,735 blocks // 69 blocks per 1,100-token request"
  },
  "ch02-predict-band": {
   "question": "p95 TTFT at 104 users with max_num_seqs capped at 96",
   "rel_tol": 0.15,
   "unit": "s",
   "value": 21.4,
   "value_text": "21.4",
   "why": "median over 3 seeds: a cap below what the users keep in flight moves the excess into the waiting queue: no preemption, but every queued request waits for a running one to finish, far past the 2 s target"
  },
  "ch02-predict-cap": {
   "question": "goodput at 120 users with max_num_seqs sized from p95 capacity, as a share of the goodput with the team's cap of 256",
   "rel_tol": 0.05,
   "unit": "% of the goodput at 256",
   "value": 90.1,
   "value_text": "90.1",
   "why": "median over 3 seeds: a cap of 74 below the 120 users in flight ends preemption, but the batch it leaves decodes fewer tokens per step than the team's cap of 256 does, preemptions and all"
  },
  "ch02-predict-first-preemption": {
   "question": "the step of the stepper's first preemption (five 40-token prompts, 20 blocks of 16)",
   "rel_tol": 0.0,
   "unit": "step",
   "value": 26,
   "value_text": "26",
   "why": "five 40-token prompts take 3 blocks each (15 of 20); the answers fill the last partial blocks and then one new block each every 16 tokens: 5 blocks at token 48, and at token 64 nothing is left, so step 26 preempts"
  },
  "ch02-predict-guaranteed": {
   "question": "mean running requests at Belgavi under guaranteed admission with max_tokens 1,500",
   "rel_tol": 0.05,
   "unit": "requests",
   "value": 11.0,
   "value_text": "11",
   "why": "guaranteed admission reserves 850 + 1,500 tokens (147 blocks) per request, although answers average 250, and runs at the pool's ceiling: 37% fewer than optimistic's 17.4, not half, because optimistic admission does not fill the pool either (median over 5 seeds)"
  },
  "ch02-predict-incident": {
   "question": "preemptions per 1,000 requests in the load test at 120 users",
   "rel_tol": 0.15,
   "unit": "per 1,000 requests",
   "value": 315.6,
   "value_text": "315.6",
   "why": "median over 3 seeds: at 120 users the running batch grows into the pool and a request can be preempted several times, so this is a rate, not a share: 184 requests in every 1,000 are preempted at least once; at 40 and 80 users their KV never fills the pool"
  },
  "ch02-predict-tax": {
   "question": "the share of the engine's tokens that were recomputation at 120 users",
   "rel_tol": 0.2,
   "unit": "% of the work",
   "value": 10.0,
   "value_text": "10",
   "why": "recomputed tokens are prefill work the engine counts in its throughput and the users never see"
  },
  "ch02-predict-thrash": {
   "question": "the thrash loop's goodput as a share of the gated run's",
   "rel_tol": 0.15,
   "unit": "% of the gated run",
   "value": 49.4,
   "value_text": "49.4",
   "why": "without the full-prompt gate and the prefix cache, long prompts are preempted half prefilled and start over, so the engine stays busy and delivers about half"
  },
  "ch03-predict-block-ratio": {
   "question": "recompute / swap round trip at 16-token blocks in the block-size study",
   "rel_tol": 0.1,
   "unit": "x",
   "value": 1.239319587156227,
   "value_text": "1.239",
   "why": "recompute takes 1.24 times the swap round trip at 16-token blocks in kvsim (the paper measured at most about 1.2): its PCIe copies run at a clean 25 GB/s"
  },
  "ch03-predict-copies": {
   "question": "block copies of swapping out Belgavi's 1,100-token request",
   "rel_tol": 0.1,
   "unit": "copies",
   "value": 4416,
   "value_text": "4,416",
   "why": "69 blocks x 32 layers x 2 = 4,416 copies one way, each a few microseconds whatever its size"
  },
  "ch03-predict-crossover": {
   "question": "on the H100, the length from which recompute costs less than a swap of Llama-3.1-8B",
   "rel_tol": 0.15,
   "unit": "tokens",
   "value": 689,
   "value_text": "689",
   "why": "below 689 tokens a recompute's fixed cost (every weight read once) exceeds the copies; swap wins again from 16,102 tokens (quadratic attention); within kvsim's error band the first crossing could lie anywhere from 449 to 880"
  },
  "ch03-predict-recompute": {
   "question": "recomputing those 1,100 tokens on the A40",
   "rel_tol": 0.1,
   "unit": "ms",
   "value": 146.76302378198918,
   "value_text": "146.8",
   "why": "one prefill step of 1,100 tokens on the calibrated A40 (every weight read once, the matmuls, quadratic attention): 0.133 ms per token, near the seeds' 0.12"
  },
  "ch03-predict-rescued": {
   "question": "the share of a resumed request's tokens it finds still cached under V1",
   "rel_tol": 0.15,
   "unit": "%",
   "value": 57.83458443227158,
   "value_text": "57.83",
   "why": "median over 5 seeds (45-70%): a resumed request finds its own full blocks until new requests take them"
  },
  "ch03-predict-slow-link": {
   "question": "how long one swap-out of a 1,300-token request over a 4 GB/s link freezes every stream",
   "rel_tol": 0.05,
   "unit": "ms",
   "value": 187.71046400000003,
   "value_text": "187.7",
   "why": "1,300 tokens x 0.5 MiB over 4 GB/s plus the copies: every running stream waits that long for one swap-out, and as long again for the swap-in"
  },
  "ch03-predict-tier-cut": {
   "band": [
    85.7967821123303,
    88.93508299821606
   ],
   "band_label": "its range over seeds",
   "band_text": [
    "85.8",
    "88.94"
   ],
   "question": "the share of Belgavi's storm's recomputed tokens a 4 GiB host tier removes",
   "rel_tol": 0.05,
   "unit": "%",
   "value": 87.35225780381856,
   "value_text": "87.35",
   "why": "median over 5 seeds: the tier holds the prompts of the requests the storm preempts, so they load those blocks instead of computing them; what remains recomputed is mostly their answers' tokens, which the tier never stores (vLLM's offload_prompt_only)"
  },
  "ch04-predict-alert-delay": {
   "question": "minutes from the first preemption to the preemption alert of chapter 2's source article",
   "rel_tol": 0.1,
   "unit": "minutes",
   "value": 10.0,
   "value_text": "10",
   "why": "rate() over 5 minutes turns positive within a scrape or two of the first preemption, and `for: 10m` then waits ten more minutes; by then the storm is over"
  },
  "ch04-predict-compute-bound": {
   "question": "the peak KV usage of a compute-bound overload on an H100",
   "rel_tol": 0.1,
   "unit": "% of the pool",
   "value": 55.2,
   "value_text": "55.2",
   "why": "the batch is capped at 256 sequences of short requests: the queue grows while the cache has room, so the fix is compute or the cap, not memory"
  },
  "ch04-predict-lint": {
   "question": "findings of the rule linter on the two rules of chapter 2's source article, on a V1 server",
   "rel_tol": 0.1,
   "unit": "findings",
   "value": 1,
   "value_text": "1",
   "why": "the near-full rule watches vllm:gpu_cache_usage_perc, a name current V1 servers no longer expose: the rule can never fire there"
  },
  "ch04-predict-mean": {
   "question": "the storm's highest 5-minute mean inter-token latency as a multiple of the healthy one",
   "rel_tol": 0.1,
   "unit": "x the healthy mean",
   "value": 1.63,
   "value_text": "1.63",
   "why": "the mean rises from 34 ms to at most 56 ms, while one stream waits 4.4 s: a handful of long pauses barely move an average over thousands of regular tokens"
  },
  "ch04-predict-queue": {
   "question": "the peak of vllm:num_requests_waiting in the incident",
   "rel_tol": 0.15,
   "unit": "requests",
   "value": 26,
   "value_text": "26",
   "why": "admission stops while the cache is pinned: arrivals wait, and every preemption puts one more request at the front of the queue"
  },
  "ch04-predict-slack": {
   "question": "token slots the KV gauge counts as used at minute 22 that hold no KV",
   "rel_tol": 0.15,
   "unit": "tokens",
   "value": 202,
   "value_text": "202",
   "why": "the gauge counts 1,735 whole blocks of 1,735; the last block of each of 26 running requests is partly empty, 202 token slots in all"
  },
  "ch05-predict-cap": {
   "question": "preemptions per 1,000 with max_tokens 400, as a share of the uncapped",
   "rel_tol": 0.15,
   "unit": "% of the uncapped",
   "value": 46.5,
   "value_text": "46.5",
   "why": "a cap at 400 shortens only the answers above it, so requests hold less KV and finish sooner: the server is no longer overloaded, but its cache still fills at peaks (127 against 273 per 1,000)"
  },
  "ch05-predict-lab": {
   "question": "the lab's p95 TTFT at 0.80 of memory with 400-token answers",
   "rel_tol": 0.2,
   "unit": "s",
   "value": 43.1,
   "value_text": "43.1",
   "why": "400-token answers need 79 blocks each: even at 0.8 the offered load exceeds what the cache turns over, so the queue grows for the whole run"
  },
  "ch05-predict-paused": {
   "question": "the share of users paused over 1 s with 600-token answers",
   "rel_tol": 0.15,
   "unit": "% of users",
   "value": 29.0,
   "value_text": "29",
   "why": "with 600-token answers the cache is pinned and the queue never empties: every admission evicts someone mid-answer, and the victim waits for blocks to free before its recompute"
  },
  "ch05-predict-running": {
   "question": "median running requests in Belgavi's steady state over ten days",
   "rel_tol": 0.1,
   "unit": "requests",
   "value": 18.7,
   "value_text": "18.7",
   "why": "1.5 requests/s, each in the running batch for about 12 s, keep about 19 running (Little's law); the days range from 15.1 to 21.9, below the 25 that fit"
  },
  "ch05-predict-storm": {
   "question": "the least gpu_memory_utilization that ends mission 1's storm on all five days",
   "rel_tol": 0.03,
   "unit": "of GPU memory",
   "value": 0.86,
   "value_text": "0.86",
   "why": "the least gpu_memory_utilization on the grid that meets the SLO on all five days; a lucky day passes with far less, the worst day needs this much"
  },
  "ch06-predict-a40": {
   "band": [
    1.75,
    2.5
   ],
   "band_label": "the thresholds of the three days",
   "band_text": [
    "1.75",
    "2.5"
   ],
   "question": "the highest rate one A40 with a 16-bit cache sustains under the SLO",
   "rel_tol": 0.1,
   "unit": "requests/s",
   "value": 1.75,
   "value_text": "1.75",
   "why": "the SLO must hold on every day: the seeds' thresholds run from 1.75 to 2.5 req/s and the lowest decides; just above it ttft_p99_s fails (a queue that grows), long before the cache alone would"
  },
  "ch06-predict-bill": {
   "question": "what the cheapest configuration costs an hour at 10 requests/s",
   "rel_tol": 0.15,
   "unit": "dollars an hour",
   "value": 2.0,
   "value_text": "2",
   "why": "4 replicas of the A40 FP8 (10 / 3.25 req/s, rounded up) at $0.50 an hour each; a whole replica is paid for even when the last one is half used"
  },
  "ch06-predict-h100": {
   "question": "the H100 with an FP8 cache: its sustainable rate as a multiple of the A40 FP16's",
   "rel_tol": 0.15,
   "unit": "times the A40 FP16's rate",
   "value": 8.6,
   "value_text": "8.6",
   "why": "the H100 steps faster (more bandwidth and compute) and FP8 halves each token's bytes, so more requests run at once: 15 against 1.75 req/s, for 5 times the price an hour"
  },
  "ch06-predict-slow": {
   "question": "the A40 FP8's sustainable rate with every engine step 10% slower",
   "rel_tol": 0.1,
   "unit": "requests/s",
   "value": 3.0,
   "value_text": "3",
   "why": "every step 10% longer serves each request more slowly, so the queue's knee comes sooner: 3 against 3.25 req/s at kvsim's own step time"
  }
 }
};
