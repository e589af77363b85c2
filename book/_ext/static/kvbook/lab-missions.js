/* The lab's missions, every grid point scored by kvsim.lab.missions.score():
 * written by scripts/lab_site_data.py (kvsim.book.lab_site); do not edit. */
window.kvbookLabData = {
 "format": "kvbook-lab-missions",
 "kvsim_version": "2.0.0",
 "missions": [
  {
   "band": false,
   "causes": [
    {
     "key": "kv-too-small",
     "text": "the KV cache is too small for the traffic: memory-bound"
    },
    {
     "key": "compute-bound",
     "text": "the GPU is out of compute: batches are too big to run fast"
    },
    {
     "key": "swap-link",
     "text": "swap copies over PCIe freeze the streams"
    },
    {
     "key": "queue-cap",
     "text": "max_num_seqs is too low, so requests queue"
    }
   ],
   "debrief": "KV usage pinned at the top while the waiting queue grows is the memory-bound signature: every preemption frees one request's blocks for another. Only added capacity escapes the trade-off. Ask for memory in the smallest step that ends the storm on every day of traffic, not on the lucky one. The trap: replayed cold (2 minutes from an empty server, as this mission once was), gpu_memory_utilization=0.76 passes on all 5 days; after a 2-minute warm-up over 10 minutes it holds on 4 of 5 (seed 3: p95 time to first token 6.48s > 2s). The answer is gpu_memory_utilization=0.87.",
   "direction": "min",
   "duration_s": 600.0,
   "expert": [
    0.87
   ],
   "flags": "--gpu-memory-utilization (vllm serve); the co-located service must shrink by as much",
   "key": "storm",
   "levers": [
    {
     "codes": [
      "0.6",
      "0.61",
      "0.62",
      "0.63",
      "0.64",
      "0.65",
      "0.66",
      "0.67",
      "0.68",
      "0.69",
      "0.7",
      "0.71",
      "0.72",
      "0.73",
      "0.74",
      "0.75",
      "0.76",
      "0.77",
      "0.78",
      "0.79",
      "0.8",
      "0.81",
      "0.82",
      "0.83",
      "0.84",
      "0.85",
      "0.86",
      "0.87",
      "0.88",
      "0.89",
      "0.9",
      "0.91",
      "0.92",
      "0.93",
      "0.94",
      "0.95"
     ],
     "kind": "float",
     "label": "memory for the server (gpu_memory_utilization)",
     "name": "gpu_memory_utilization",
     "shown": [
      "0.60",
      "0.61",
      "0.62",
      "0.63",
      "0.64",
      "0.65",
      "0.66",
      "0.67",
      "0.68",
      "0.69",
      "0.70",
      "0.71",
      "0.72",
      "0.73",
      "0.74",
      "0.75",
      "0.76",
      "0.77",
      "0.78",
      "0.79",
      "0.80",
      "0.81",
      "0.82",
      "0.83",
      "0.84",
      "0.85",
      "0.86",
      "0.87",
      "0.88",
      "0.89",
      "0.90",
      "0.91",
      "0.92",
      "0.93",
      "0.94",
      "0.95"
     ],
     "start": 0.6,
     "values": [
      0.6,
      0.61,
      0.62,
      0.63,
      0.64,
      0.65,
      0.66,
      0.67,
      0.68,
      0.69,
      0.7,
      0.71,
      0.72,
      0.73,
      0.74,
      0.75,
      0.76,
      0.77,
      0.78,
      0.79,
      0.8,
      0.81,
      0.82,
      0.83,
      0.84,
      0.85,
      0.86,
      0.87,
      0.88,
      0.89,
      0.9,
      0.91,
      0.92,
      0.93,
      0.94,
      0.95
     ]
    }
   ],
   "number": 1,
   "pass_band": [
    [
     0.87,
     0.95
    ]
   ],
   "resource": "gpu_memory_utilization",
   "right_bands": [],
   "right_causes": [
    "kv-too-small"
   ],
   "rows": [
    {
     "days": 0,
     "median": [
      14.9935,
      172.3356,
      0.0309
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 22.3 > 10.",
     "settings": [
      0.6
     ],
     "stars": 0,
     "worst": [
      46.4219,
      288.1178,
      0.0678
     ]
    },
    {
     "days": 0,
     "median": [
      12.5679,
      143.9909,
      0.0252
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 16.8 > 10.",
     "settings": [
      0.61
     ],
     "stars": 0,
     "worst": [
      39.4425,
      278.654,
      0.0648
     ]
    },
    {
     "days": 0,
     "median": [
      10.8398,
      139.748,
      0.0238
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 12.3 > 10.",
     "settings": [
      0.62
     ],
     "stars": 0,
     "worst": [
      34.1892,
      268.1388,
      0.0667
     ]
    },
    {
     "days": 1,
     "median": [
      8.7837,
      104.2383,
      0.0238
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 10.7s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.63
     ],
     "stars": 0,
     "worst": [
      28.8816,
      266.0358,
      0.0589
     ]
    },
    {
     "days": 1,
     "median": [
      7.4762,
      85.9107,
      0.0204
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 9.53s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.64
     ],
     "stars": 0,
     "worst": [
      25.0177,
      255.5205,
      0.0551
     ]
    },
    {
     "days": 1,
     "median": [
      6.1502,
      75.9637,
      0.0172
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 8.33s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.65
     ],
     "stars": 0,
     "worst": [
      22.3867,
      231.3354,
      0.0481
     ]
    },
    {
     "days": 1,
     "median": [
      4.5258,
      73.3104,
      0.0102
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 7.29s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.66
     ],
     "stars": 0,
     "worst": [
      20.426,
      239.7476,
      0.0554
     ]
    },
    {
     "days": 1,
     "median": [
      3.2459,
      44.6735,
      0.0068
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 6.12s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.67
     ],
     "stars": 0,
     "worst": [
      18.8228,
      243.9537,
      0.0478
     ]
    },
    {
     "days": 1,
     "median": [
      2.6201,
      43.0839,
      0.0068
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 5.32s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.68
     ],
     "stars": 0,
     "worst": [
      16.5257,
      186.1199,
      0.0339
     ]
    },
    {
     "days": 1,
     "median": [
      1.7746,
      31.746,
      0.0057
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.15s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.69
     ],
     "stars": 0,
     "worst": [
      14.9771,
      149.3165,
      0.0297
     ]
    },
    {
     "days": 1,
     "median": [
      1.3045,
      18.3276,
      0.0023
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.31s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.7
     ],
     "stars": 0,
     "worst": [
      14.0138,
      125.1314,
      0.0233
     ]
    },
    {
     "days": 1,
     "median": [
      1.0984,
      17.1821,
      0.0023
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 2.2s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.71
     ],
     "stars": 0,
     "worst": [
      12.129,
      95.6887,
      0.0233
     ]
    },
    {
     "days": 1,
     "median": [
      0.4972,
      13.6054,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 19.3 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.72
     ],
     "stars": 0,
     "worst": [
      11.1601,
      74.6583,
      0.0137
     ]
    },
    {
     "days": 1,
     "median": [
      0.3653,
      13.6054,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 14.7 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.73
     ],
     "stars": 0,
     "worst": [
      9.8234,
      64.143,
      0.0127
     ]
    },
    {
     "days": 3,
     "median": [
      0.3326,
      9.0703,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 12.5 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.74
     ],
     "stars": 0,
     "worst": [
      9.1094,
      67.2976,
      0.0126
     ]
    },
    {
     "days": 3,
     "median": [
      0.2959,
      6.8729,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 11.3 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.75
     ],
     "stars": 0,
     "worst": [
      7.6473,
      55.7308,
      0.0105
     ]
    },
    {
     "days": 4,
     "median": [
      0.2799,
      4.5351,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 6.48s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.76
     ],
     "stars": 0,
     "worst": [
      6.4825,
      55.7308,
      0.0116
     ]
    },
    {
     "days": 4,
     "median": [
      0.2786,
      3.4364,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 5.56s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.77
     ],
     "stars": 0,
     "worst": [
      5.5558,
      55.7308,
      0.0074
     ]
    },
    {
     "days": 4,
     "median": [
      0.2732,
      3.4014,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 4.71s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.78
     ],
     "stars": 0,
     "worst": [
      4.7116,
      41.0095,
      0.0105
     ]
    },
    {
     "days": 4,
     "median": [
      0.2712,
      3.4014,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 4.04s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.79
     ],
     "stars": 0,
     "worst": [
      4.0373,
      39.9579,
      0.0084
     ]
    },
    {
     "days": 4,
     "median": [
      0.2786,
      1.1338,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.69s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.8
     ],
     "stars": 0,
     "worst": [
      2.6948,
      34.7003,
      0.0053
     ]
    },
    {
     "days": 4,
     "median": [
      0.2678,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 30.5 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.81
     ],
     "stars": 0,
     "worst": [
      1.9443,
      30.4942,
      0.0084
     ]
    },
    {
     "days": 4,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 26.3 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.82
     ],
     "stars": 0,
     "worst": [
      1.2372,
      26.2881,
      0.0042
     ]
    },
    {
     "days": 4,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 18.9 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.83
     ],
     "stars": 0,
     "worst": [
      0.8085,
      18.9274,
      0.0042
     ]
    },
    {
     "days": 4,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 17.9 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.84
     ],
     "stars": 0,
     "worst": [
      0.4593,
      17.8759,
      0.0032
     ]
    },
    {
     "days": 4,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 11.6 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.85
     ],
     "stars": 0,
     "worst": [
      0.3467,
      11.5668,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 11.6 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.86
     ],
     "stars": 0,
     "worst": [
      0.321,
      11.5668,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.87, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 1: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.87, the least kvsim's search finds.",
     "message_wrong": "Mission 1: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.87, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      0.87
     ],
     "stars": 2,
     "worst": [
      0.3024,
      7.3607,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.88.",
     "settings": [
      0.88
     ],
     "stars": 1,
     "worst": [
      0.3031,
      1.0515,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.89.",
     "settings": [
      0.89
     ],
     "stars": 1,
     "worst": [
      0.2948,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.9.",
     "settings": [
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2947,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.91.",
     "settings": [
      0.91
     ],
     "stars": 1,
     "worst": [
      0.2948,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.92.",
     "settings": [
      0.92
     ],
     "stars": 1,
     "worst": [
      0.2948,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.93.",
     "settings": [
      0.93
     ],
     "stars": 1,
     "worst": [
      0.2948,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.94.",
     "settings": [
      0.94
     ],
     "stars": 1,
     "worst": [
      0.2948,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2681,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.87, less than your 0.95.",
     "settings": [
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2948,
      0.0,
      0.0
     ]
    }
   ],
   "slo": [
    {
     "decimals": 2,
     "key": "ttft_p95_s",
     "label": "p95 time to first token",
     "limit": 2.0,
     "scale": 1.0,
     "unit": "s"
    },
    {
     "decimals": 1,
     "key": "preemptions_per_1k",
     "label": "preemptions per 1,000 requests",
     "limit": 10.0,
     "scale": 1.0,
     "unit": ""
    },
    {
     "decimals": 2,
     "key": "share_paused_over_1s",
     "label": "share of users paused > 1 s",
     "limit": 0.01,
     "scale": 100.0,
     "unit": "%"
    }
   ],
   "slo_text": "p95 time to first token <= 2 s; preemptions per 1,000 requests <= 10; share of users paused > 1 s <= 1%",
   "title": "Preemption storm after the lunch rush",
   "warmup_s": 120.0
  },
  {
   "band": false,
   "causes": [
    {
     "key": "swap-link",
     "text": "swap copies over the slow link freeze every stream"
    },
    {
     "key": "kv-too-small",
     "text": "the KV cache is simply too small (and swap has nothing to do with it)"
    },
    {
     "key": "compute-bound",
     "text": "the GPU is out of compute"
    },
    {
     "key": "answers-longer",
     "text": "the answers got longer"
    }
   ],
   "debrief": "Swap copies run inside the step: on a shared 4 GB/s link one victim's blocks take longer to copy than several decode steps, and every stream waits for them (chapter 3 computes the freeze). Recompute spends GPU time instead, chunked into steps that were running anyway, so the tail of every stream shortens; memory then ends the queue. vLLM V1 removed swap: upgrading is the same fix. The trap: replayed cold (2 minutes from an empty server, as this mission once was), gpu_memory_utilization=0.6 passes on all 5 days; after a 2-minute warm-up over 10 minutes it holds on 0 of 5 (seed 0: preemptions per 1,000 requests 135 > 80). The answer is gpu_memory_utilization=0.85.",
   "direction": "min",
   "duration_s": 600.0,
   "expert": [
    "recompute",
    0.85
   ],
   "flags": "--preemption-mode recompute (vLLM V0 only; V1 always recomputes and has no swap), then --gpu-memory-utilization",
   "key": "slow-pcie",
   "levers": [
    {
     "codes": [
      "swap",
      "recompute"
     ],
     "kind": "choice",
     "label": "preemption mode",
     "name": "preemption_mode",
     "shown": [
      "swap",
      "recompute"
     ],
     "start": "swap",
     "values": [
      "swap",
      "recompute"
     ]
    },
    {
     "codes": [
      "0.6",
      "0.65",
      "0.7",
      "0.75",
      "0.8",
      "0.85",
      "0.9",
      "0.95"
     ],
     "kind": "float",
     "label": "memory for the server (gpu_memory_utilization)",
     "name": "gpu_memory_utilization",
     "shown": [
      "0.60",
      "0.65",
      "0.70",
      "0.75",
      "0.80",
      "0.85",
      "0.90",
      "0.95"
     ],
     "start": 0.6,
     "values": [
      0.6,
      0.65,
      0.7,
      0.75,
      0.8,
      0.85,
      0.9,
      0.95
     ]
    }
   ],
   "number": 2,
   "pass_band": [
    [
     0.85,
     0.95
    ]
   ],
   "resource": "gpu_memory_utilization",
   "right_bands": [],
   "right_causes": [
    "swap-link"
   ],
   "rows": [
    {
     "days": 0,
     "median": [
      89.1142,
      232.6733,
      0.1365,
      0.2389
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 148 > 80.",
     "settings": [
      "swap",
      0.6
     ],
     "stars": 0,
     "worst": [
      121.0437,
      257.885,
      0.1577,
      0.2389
     ]
    },
    {
     "days": 1,
     "median": [
      51.7231,
      204.6205,
      0.1064,
      0.243
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 51.7s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.65
     ],
     "stars": 0,
     "worst": [
      83.9463,
      228.2004,
      0.14,
      0.2431
     ]
    },
    {
     "days": 1,
     "median": [
      35.0459,
      168.9655,
      0.097,
      0.2471
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 35s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.7
     ],
     "stars": 0,
     "worst": [
      57.8121,
      188.1188,
      0.1007,
      0.2473
     ]
    },
    {
     "days": 1,
     "median": [
      21.9923,
      82.7586,
      0.0362,
      0.1913
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 82.8 > 80. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.75
     ],
     "stars": 0,
     "worst": [
      35.4992,
      167.8571,
      0.085,
      0.2514
     ]
    },
    {
     "days": 2,
     "median": [
      9.1629,
      39.2857,
      0.019,
      0.1877
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p99 inter-token gap 189ms > 180ms. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.8
     ],
     "stars": 0,
     "worst": [
      15.1679,
      100.6601,
      0.0585,
      0.2549
     ]
    },
    {
     "days": 4,
     "median": [
      4.8864,
      13.7931,
      0.0054,
      0.1637
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p99 inter-token gap 195ms > 180ms. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.85
     ],
     "stars": 0,
     "worst": [
      6.8342,
      54.4554,
      0.0273,
      0.1945
     ]
    },
    {
     "days": 5,
     "median": [
      0.5217,
      7.1429,
      0.0036,
      0.1661
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.9.",
     "settings": [
      "swap",
      0.9
     ],
     "stars": 1,
     "worst": [
      1.7429,
      12.069,
      0.0067,
      0.1675
     ]
    },
    {
     "days": 5,
     "median": [
      0.2767,
      0.0,
      0.0,
      0.1629
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.95.",
     "settings": [
      "swap",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.3212,
      1.7241,
      0.0017,
      0.1676
     ]
    },
    {
     "days": 0,
     "median": [
      72.0991,
      243.1034,
      0.1161,
      0.2388
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 135 > 80.",
     "settings": [
      "recompute",
      0.6
     ],
     "stars": 0,
     "worst": [
      100.1314,
      259.7403,
      0.1477,
      0.2389
     ]
    },
    {
     "days": 1,
     "median": [
      42.2714,
      203.5714,
      0.0916,
      0.2429
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 42.3s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.65
     ],
     "stars": 0,
     "worst": [
      69.6916,
      211.5028,
      0.1084,
      0.2431
     ]
    },
    {
     "days": 1,
     "median": [
      30.9113,
      150.0,
      0.0678,
      0.2468
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 30.9s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.7
     ],
     "stars": 0,
     "worst": [
      47.0298,
      185.7143,
      0.0704,
      0.2472
     ]
    },
    {
     "days": 3,
     "median": [
      16.6726,
      72.4138,
      0.0259,
      0.1568
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 139 > 80. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.75
     ],
     "stars": 0,
     "worst": [
      25.2805,
      158.4158,
      0.0589,
      0.2512
     ]
    },
    {
     "days": 4,
     "median": [
      8.6285,
      29.3103,
      0.0074,
      0.1601
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 111 > 80. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.8
     ],
     "stars": 0,
     "worst": [
      12.1633,
      110.5611,
      0.0515,
      0.2549
     ]
    },
    {
     "days": 5,
     "median": [
      4.2287,
      13.7931,
      0.0054,
      0.1631
     ],
     "message": "Mission 2: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.85, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 2: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.85, the least kvsim's search finds.",
     "message_wrong": "Mission 2: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.85, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      "recompute",
      0.85
     ],
     "stars": 2,
     "worst": [
      5.6786,
      33.0033,
      0.0085,
      0.1646
     ]
    },
    {
     "days": 5,
     "median": [
      0.3812,
      7.1429,
      0.0,
      0.1635
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.9.",
     "settings": [
      "recompute",
      0.9
     ],
     "stars": 1,
     "worst": [
      1.5382,
      12.069,
      0.0067,
      0.1671
     ]
    },
    {
     "days": 5,
     "median": [
      0.2767,
      0.0,
      0.0,
      0.163
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.95.",
     "settings": [
      "recompute",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.3212,
      1.7241,
      0.0017,
      0.1676
     ]
    }
   ],
   "slo": [
    {
     "decimals": 2,
     "key": "ttft_p95_s",
     "label": "p95 time to first token",
     "limit": 25.0,
     "scale": 1.0,
     "unit": "s"
    },
    {
     "decimals": 1,
     "key": "preemptions_per_1k",
     "label": "preemptions per 1,000 requests",
     "limit": 80.0,
     "scale": 1.0,
     "unit": ""
    },
    {
     "decimals": 2,
     "key": "share_paused_over_1s",
     "label": "share of users paused > 1 s",
     "limit": 0.05,
     "scale": 100.0,
     "unit": "%"
    },
    {
     "decimals": 0,
     "key": "itl_p99_s",
     "label": "p99 inter-token gap",
     "limit": 0.18,
     "scale": 1000.0,
     "unit": "ms"
    }
   ],
   "slo_text": "p95 time to first token <= 25 s; preemptions per 1,000 requests <= 80; share of users paused > 1 s <= 5%; p99 inter-token gap <= 180ms",
   "title": "Every stream stutters when the cache is full",
   "warmup_s": 120.0
  },
  {
   "band": false,
   "causes": [
    {
     "key": "answers-longer",
     "text": "the answers got longer: each request now holds more KV"
    },
    {
     "key": "memory-lost",
     "text": "the GPU lost memory overnight (the same traffic, a smaller pool)"
    },
    {
     "key": "traffic-up",
     "text": "traffic went up"
    },
    {
     "key": "compute-bound",
     "text": "the GPU is out of compute"
    }
   ],
   "debrief": "A prompt change that doubles the answer length halves effective concurrency with no change in traffic. Fix it in the source's order: cap max_tokens at what the product needs, then FP8 KV (twice the tokens per byte), then memory, and only then a lower max_num_seqs, which trades preemption for queueing. Replayed cold (2 minutes from an empty server, as this mission once was), gpu_memory_utilization=0.6 passes on all 5 days, and here the warm day agrees: it holds on 5 of 5 after a 2-minute warm-up over 10 minutes.",
   "direction": "min",
   "duration_s": 600.0,
   "expert": [
    400,
    "fp8",
    0.6
   ],
   "flags": "max_tokens on every request (or --max-model-len / a client default), then --kv-cache-dtype fp8, then --gpu-memory-utilization, and only then --max-num-seqs",
   "key": "longer-answers",
   "levers": [
    {
     "codes": [
      "400",
      "500",
      "600",
      "800",
      "none"
     ],
     "kind": "int",
     "label": "max_tokens (the product needs 400)",
     "name": "max_tokens",
     "shown": [
      "400",
      "500",
      "600",
      "800",
      "no cap"
     ],
     "start": null,
     "values": [
      400,
      500,
      600,
      800,
      null
     ]
    },
    {
     "codes": [
      "fp16",
      "fp8"
     ],
     "kind": "choice",
     "label": "KV cache dtype",
     "name": "kv_dtype",
     "shown": [
      "fp16",
      "fp8"
     ],
     "start": "fp16",
     "values": [
      "fp16",
      "fp8"
     ]
    },
    {
     "codes": [
      "0.6",
      "0.65",
      "0.7",
      "0.75",
      "0.8",
      "0.85",
      "0.9",
      "0.95"
     ],
     "kind": "float",
     "label": "memory for the server (gpu_memory_utilization)",
     "name": "gpu_memory_utilization",
     "shown": [
      "0.60",
      "0.65",
      "0.70",
      "0.75",
      "0.80",
      "0.85",
      "0.90",
      "0.95"
     ],
     "start": 0.6,
     "values": [
      0.6,
      0.65,
      0.7,
      0.75,
      0.8,
      0.85,
      0.9,
      0.95
     ]
    }
   ],
   "number": 3,
   "pass_band": [
    [
     0.6,
     0.95
    ]
   ],
   "resource": "gpu_memory_utilization",
   "right_bands": [],
   "right_causes": [
    "answers-longer"
   ],
   "rows": [
    {
     "days": 0,
     "median": [
      10.0926,
      140.5896,
      0.0311
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 5.76s > 2s.",
     "settings": [
      400,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      10.9661,
      237.6446,
      0.0423
     ]
    },
    {
     "days": 0,
     "median": [
      5.3505,
      68.0272,
      0.0103
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 41.3 > 10.",
     "settings": [
      400,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      6.5776,
      73.6067,
      0.0129
     ]
    },
    {
     "days": 1,
     "median": [
      2.1418,
      34.0136,
      0.0043
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 2.03s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      400,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      4.1812,
      39.9579,
      0.008
     ]
    },
    {
     "days": 2,
     "median": [
      0.3555,
      10.2041,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 10.2 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      400,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      2.0139,
      26.2881,
      0.0034
     ]
    },
    {
     "days": 4,
     "median": [
      0.2762,
      2.2676,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 15.8 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      400,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      0.4801,
      15.7729,
      0.0011
     ]
    },
    {
     "days": 5,
     "median": [
      0.2712,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.85.",
     "settings": [
      400,
      "fp16",
      0.85
     ],
     "stars": 1,
     "worst": [
      0.3219,
      6.3091,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2712,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.9.",
     "settings": [
      400,
      "fp16",
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2976,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2712,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.95.",
     "settings": [
      400,
      "fp16",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2976,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 3: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds.",
     "message_wrong": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      400,
      "fp8",
      0.6
     ],
     "stars": 2,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.65.",
     "settings": [
      400,
      "fp8",
      0.65
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.7.",
     "settings": [
      400,
      "fp8",
      0.7
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.75.",
     "settings": [
      400,
      "fp8",
      0.75
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.8.",
     "settings": [
      400,
      "fp8",
      0.8
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.85.",
     "settings": [
      400,
      "fp8",
      0.85
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.9.",
     "settings": [
      400,
      "fp8",
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2445,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.95.",
     "settings": [
      400,
      "fp8",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2529,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      71.8339,
      317.2967,
      0.0959
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 37.9s > 2s.",
     "settings": [
      500,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      90.9342,
      357.1429,
      0.103
     ]
    },
    {
     "days": 0,
     "median": [
      39.8716,
      311.7914,
      0.0879
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 16.1s > 2s.",
     "settings": [
      500,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      55.5569,
      337.5394,
      0.0968
     ]
    },
    {
     "days": 0,
     "median": [
      18.9486,
      320.8617,
      0.0697
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 7.79s > 2s.",
     "settings": [
      500,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      28.6068,
      349.1062,
      0.0821
     ]
    },
    {
     "days": 0,
     "median": [
      8.5444,
      160.9977,
      0.034
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 3.77s > 2s.",
     "settings": [
      500,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      12.1556,
      280.7571,
      0.0641
     ]
    },
    {
     "days": 0,
     "median": [
      6.0192,
      65.7596,
      0.0102
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 22.3 > 10.",
     "settings": [
      500,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      7.4745,
      94.6372,
      0.0183
     ]
    },
    {
     "days": 1,
     "median": [
      3.1721,
      35.1474,
      0.0045
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.47s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      500,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      6.9799,
      49.8866,
      0.0102
     ]
    },
    {
     "days": 2,
     "median": [
      0.5404,
      17.1821,
      0.0023
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 22.7 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      500,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      5.3817,
      23.1335,
      0.0053
     ]
    },
    {
     "days": 4,
     "median": [
      0.3053,
      6.8729,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.07s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      500,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      2.0722,
      19.979,
      0.0043
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 3: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds.",
     "message_wrong": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      500,
      "fp8",
      0.6
     ],
     "stars": 2,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.65.",
     "settings": [
      500,
      "fp8",
      0.65
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.7.",
     "settings": [
      500,
      "fp8",
      0.7
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.75.",
     "settings": [
      500,
      "fp8",
      0.75
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.8.",
     "settings": [
      500,
      "fp8",
      0.8
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.85.",
     "settings": [
      500,
      "fp8",
      0.85
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.9.",
     "settings": [
      500,
      "fp8",
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2522,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.95.",
     "settings": [
      500,
      "fp8",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2607,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      148.8816,
      311.5693,
      0.1096
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 89.4s > 2s.",
     "settings": [
      600,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      164.4593,
      351.4739,
      0.1375
     ]
    },
    {
     "days": 0,
     "median": [
      113.0117,
      339.0023,
      0.1144
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 63.1s > 2s.",
     "settings": [
      600,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      128.8321,
      354.8753,
      0.1189
     ]
    },
    {
     "days": 0,
     "median": [
      80.5854,
      342.4036,
      0.1046
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46s > 2s.",
     "settings": [
      600,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      98.5196,
      371.134,
      0.1141
     ]
    },
    {
     "days": 0,
     "median": [
      58.5105,
      332.1879,
      0.0988
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 27.3s > 2s.",
     "settings": [
      600,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      78.3371,
      352.2608,
      0.1012
     ]
    },
    {
     "days": 0,
     "median": [
      42.472,
      342.4036,
      0.091
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 15.5s > 2s.",
     "settings": [
      600,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      56.7252,
      380.9524,
      0.1083
     ]
    },
    {
     "days": 0,
     "median": [
      28.4273,
      316.3265,
      0.0801
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.54s > 2s.",
     "settings": [
      600,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      40.604,
      377.4974,
      0.0917
     ]
    },
    {
     "days": 0,
     "median": [
      17.1376,
      315.1927,
      0.0763
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 4.71s > 2s.",
     "settings": [
      600,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      27.0813,
      349.1062,
      0.0879
     ]
    },
    {
     "days": 0,
     "median": [
      8.8318,
      217.6871,
      0.0454
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 29.1 > 10.",
     "settings": [
      600,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      16.2609,
      312.3028,
      0.0669
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 3: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds.",
     "message_wrong": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      600,
      "fp8",
      0.6
     ],
     "stars": 2,
     "worst": [
      0.2692,
      1.0515,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.65.",
     "settings": [
      600,
      "fp8",
      0.65
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.7.",
     "settings": [
      600,
      "fp8",
      0.7
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.75.",
     "settings": [
      600,
      "fp8",
      0.75
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.8.",
     "settings": [
      600,
      "fp8",
      0.8
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.85.",
     "settings": [
      600,
      "fp8",
      0.85
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.9.",
     "settings": [
      600,
      "fp8",
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2515,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.95.",
     "settings": [
      600,
      "fp8",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2686,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      236.6435,
      320.7331,
      0.1692
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 179s > 2s.",
     "settings": [
      800,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      249.7107,
      337.8685,
      0.1929
     ]
    },
    {
     "days": 0,
     "median": [
      209.7661,
      343.5374,
      0.1579
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 147s > 2s.",
     "settings": [
      800,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      223.7276,
      358.2766,
      0.1867
     ]
    },
    {
     "days": 0,
     "median": [
      187.2846,
      345.9336,
      0.1424
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 124s > 2s.",
     "settings": [
      800,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      204.4038,
      360.5442,
      0.1852
     ]
    },
    {
     "days": 0,
     "median": [
      166.2177,
      357.1429,
      0.1481
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 103s > 2s.",
     "settings": [
      800,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      183.147,
      378.6848,
      0.152
     ]
    },
    {
     "days": 0,
     "median": [
      145.1651,
      351.6609,
      0.1334
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 86.1s > 2s.",
     "settings": [
      800,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      165.9132,
      375.2834,
      0.1555
     ]
    },
    {
     "days": 0,
     "median": [
      128.1595,
      365.0794,
      0.1311
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 76.4s > 2s.",
     "settings": [
      800,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      149.1183,
      382.0862,
      0.1449
     ]
    },
    {
     "days": 0,
     "median": [
      114.2625,
      375.2834,
      0.1343
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 64.5s > 2s.",
     "settings": [
      800,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      134.0931,
      404.3528,
      0.1456
     ]
    },
    {
     "days": 0,
     "median": [
      100.4056,
      387.1707,
      0.1289
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 54s > 2s.",
     "settings": [
      800,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      120.5521,
      405.8957,
      0.133
     ]
    },
    {
     "days": 1,
     "median": [
      0.4005,
      22.6757,
      0.0053
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.53s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      800,
      "fp8",
      0.6
     ],
     "stars": 0,
     "worst": [
      5.0716,
      45.3515,
      0.0091
     ]
    },
    {
     "days": 4,
     "median": [
      0.2686,
      1.1455,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.07s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      800,
      "fp8",
      0.65
     ],
     "stars": 0,
     "worst": [
      2.0749,
      25.2366,
      0.0021
     ]
    },
    {
     "days": 4,
     "median": [
      0.2646,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 10.5 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      800,
      "fp8",
      0.7
     ],
     "stars": 0,
     "worst": [
      0.3054,
      10.5152,
      0.0011
     ]
    },
    {
     "days": 5,
     "median": [
      0.2646,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.75.",
     "settings": [
      800,
      "fp8",
      0.75
     ],
     "stars": 1,
     "worst": [
      0.2888,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2646,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.8.",
     "settings": [
      800,
      "fp8",
      0.8
     ],
     "stars": 1,
     "worst": [
      0.2888,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2646,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.85.",
     "settings": [
      800,
      "fp8",
      0.85
     ],
     "stars": 1,
     "worst": [
      0.2888,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2646,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.9.",
     "settings": [
      800,
      "fp8",
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2888,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2646,
      0.0,
      0.0
     ],
     "message": "Mission 3: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.6, less than your 0.95.",
     "settings": [
      800,
      "fp8",
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2888,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      405.2006,
      274.3764,
      0.2983
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 319s > 2s.",
     "settings": [
      null,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      417.5592,
      275.5102,
      0.3387
     ]
    },
    {
     "days": 0,
     "median": [
      381.1358,
      295.5326,
      0.2997
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 303s > 2s.",
     "settings": [
      null,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      388.7508,
      312.9252,
      0.3193
     ]
    },
    {
     "days": 0,
     "median": [
      362.748,
      305.8419,
      0.287
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 283s > 2s.",
     "settings": [
      null,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      378.4513,
      317.4603,
      0.3084
     ]
    },
    {
     "days": 0,
     "median": [
      342.1492,
      322.905,
      0.2882
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 268s > 2s.",
     "settings": [
      null,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      364.9572,
      329.932,
      0.3199
     ]
    },
    {
     "days": 0,
     "median": [
      325.7378,
      321.8786,
      0.2723
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 253s > 2s.",
     "settings": [
      null,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      351.7294,
      333.3333,
      0.2918
     ]
    },
    {
     "days": 0,
     "median": [
      316.6208,
      334.4788,
      0.253
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s.",
     "settings": [
      null,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      333.6507,
      361.678,
      0.3053
     ]
    },
    {
     "days": 0,
     "median": [
      305.5281,
      335.6009,
      0.2365
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 234s > 2s.",
     "settings": [
      null,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      321.6424,
      350.5155,
      0.2808
     ]
    },
    {
     "days": 0,
     "median": [
      296.8841,
      352.6077,
      0.2442
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 226s > 2s.",
     "settings": [
      null,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      311.8171,
      361.678,
      0.2774
     ]
    },
    {
     "days": 0,
     "median": [
      182.0803,
      468.254,
      0.2055
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 95.3s > 2s.",
     "settings": [
      null,
      "fp8",
      0.6
     ],
     "stars": 0,
     "worst": [
      216.9952,
      492.0635,
      0.2244
     ]
    },
    {
     "days": 0,
     "median": [
      150.6706,
      479.5918,
      0.1901
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 70.6s > 2s.",
     "settings": [
      null,
      "fp8",
      0.65
     ],
     "stars": 0,
     "worst": [
      195.8315,
      498.2818,
      0.2019
     ]
    },
    {
     "days": 0,
     "median": [
      121.0085,
      488.6621,
      0.1681
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.7s > 2s.",
     "settings": [
      null,
      "fp8",
      0.7
     ],
     "stars": 0,
     "worst": [
      174.4697,
      504.5351,
      0.1943
     ]
    },
    {
     "days": 0,
     "median": [
      96.7983,
      490.9297,
      0.1575
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31.2s > 2s.",
     "settings": [
      null,
      "fp8",
      0.75
     ],
     "stars": 0,
     "worst": [
      147.3098,
      519.2744,
      0.1627
     ]
    },
    {
     "days": 0,
     "median": [
      74.6091,
      470.0315,
      0.1469
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 16.9s > 2s.",
     "settings": [
      null,
      "fp8",
      0.8
     ],
     "stars": 0,
     "worst": [
      128.4793,
      529.4785,
      0.1607
     ]
    },
    {
     "days": 0,
     "median": [
      54.9365,
      458.4648,
      0.1379
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 3.49s > 2s.",
     "settings": [
      null,
      "fp8",
      0.85
     ],
     "stars": 0,
     "worst": [
      112.7641,
      490.9297,
      0.144
     ]
    },
    {
     "days": 0,
     "median": [
      38.8148,
      432.1767,
      0.1232
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 14.5 > 10.",
     "settings": [
      null,
      "fp8",
      0.9
     ],
     "stars": 0,
     "worst": [
      94.1937,
      503.4014,
      0.1389
     ]
    },
    {
     "days": 1,
     "median": [
      25.1482,
      423.7645,
      0.1055
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 25.1s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      null,
      "fp8",
      0.95
     ],
     "stars": 0,
     "worst": [
      80.4713,
      479.5918,
      0.1352
     ]
    }
   ],
   "slo": [
    {
     "decimals": 2,
     "key": "ttft_p95_s",
     "label": "p95 time to first token",
     "limit": 2.0,
     "scale": 1.0,
     "unit": "s"
    },
    {
     "decimals": 1,
     "key": "preemptions_per_1k",
     "label": "preemptions per 1,000 requests",
     "limit": 10.0,
     "scale": 1.0,
     "unit": ""
    },
    {
     "decimals": 2,
     "key": "share_paused_over_1s",
     "label": "share of users paused > 1 s",
     "limit": 0.01,
     "scale": 100.0,
     "unit": "%"
    }
   ],
   "slo_text": "p95 time to first token <= 2 s; preemptions per 1,000 requests <= 10; share of users paused > 1 s <= 1%",
   "title": "Answers grew overnight",
   "warmup_s": 120.0
  },
  {
   "band": true,
   "causes": [
    {
     "key": "headroom",
     "text": "admission fills the cache to the brim, so running requests are evicted"
    }
   ],
   "debrief": "Too little headroom and running requests are evicted mid-answer; too much and new requests queue while blocks sit free. Between them lies a band; its edges move with the burst and the answer lengths, which is why another team's limits rarely fit. In a real server, step max_num_seqs down from the value that preempts and stop at the first that holds the preemption counter near zero. Replayed cold (2 minutes from an empty server, as this mission once was), watermark=0.05 passes on all 5 days; the cold band is 0.05 to 0.09, the warm band 0.04 to 0.06 (after a 2-minute warm-up over 10 minutes): a band found cold is not the band.",
   "direction": "min",
   "duration_s": 600.0,
   "expert": [
    0.04
   ],
   "flags": "V0's block manager kept a 1% watermark; vLLM V1 had none until a `watermark` scheduler option (PR #44594, mid-2026, off by default): on older V1 releases approximate it with --max-num-seqs, stepped down from the value that preempts",
   "key": "burst",
   "levers": [
    {
     "codes": [
      "0",
      "0.01",
      "0.02",
      "0.03",
      "0.04",
      "0.05",
      "0.06",
      "0.07",
      "0.08",
      "0.09",
      "0.1",
      "0.11",
      "0.12",
      "0.13",
      "0.14",
      "0.15",
      "0.16",
      "0.17",
      "0.18",
      "0.19",
      "0.2",
      "0.21",
      "0.22",
      "0.23",
      "0.24",
      "0.25",
      "0.26",
      "0.27",
      "0.28",
      "0.29",
      "0.3"
     ],
     "kind": "float",
     "label": "admission headroom (watermark)",
     "name": "watermark",
     "shown": [
      "0.00",
      "0.01",
      "0.02",
      "0.03",
      "0.04",
      "0.05",
      "0.06",
      "0.07",
      "0.08",
      "0.09",
      "0.10",
      "0.11",
      "0.12",
      "0.13",
      "0.14",
      "0.15",
      "0.16",
      "0.17",
      "0.18",
      "0.19",
      "0.20",
      "0.21",
      "0.22",
      "0.23",
      "0.24",
      "0.25",
      "0.26",
      "0.27",
      "0.28",
      "0.29",
      "0.30"
     ],
     "start": 0.0,
     "values": [
      0.0,
      0.01,
      0.02,
      0.03,
      0.04,
      0.05,
      0.06,
      0.07,
      0.08,
      0.09,
      0.1,
      0.11,
      0.12,
      0.13,
      0.14,
      0.15,
      0.16,
      0.17,
      0.18,
      0.19,
      0.2,
      0.21,
      0.22,
      0.23,
      0.24,
      0.25,
      0.26,
      0.27,
      0.28,
      0.29,
      0.3
     ]
    }
   ],
   "number": 4,
   "pass_band": [
    [
     0.04,
     0.06
    ]
   ],
   "resource": "watermark",
   "right_bands": [
    [
     0.03,
     0.05
    ],
    [
     0.03,
     0.06
    ],
    [
     0.03,
     0.07
    ],
    [
     0.04,
     0.05
    ],
    [
     0.04,
     0.06
    ],
    [
     0.04,
     0.07
    ],
    [
     0.05,
     0.05
    ],
    [
     0.05,
     0.06
    ],
    [
     0.05,
     0.07
    ]
   ],
   "right_causes": [
    "headroom"
   ],
   "rows": [
    {
     "days": 0,
     "median": [
      25.0165,
      101.3616,
      0.0242
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 37.5 > 10.",
     "settings": [
      0.0
     ],
     "stars": 0,
     "worst": [
      33.9821,
      163.5581,
      0.0459
     ]
    },
    {
     "days": 0,
     "median": [
      24.8257,
      43.8729,
      0.0091
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 21.9 > 10.",
     "settings": [
      0.01
     ],
     "stars": 0,
     "worst": [
      33.7211,
      68.8666,
      0.0172
     ]
    },
    {
     "days": 2,
     "median": [
      24.9529,
      13.6157,
      0.003
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 13.6 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.02
     ],
     "stars": 0,
     "worst": [
      33.6406,
      31.5638,
      0.0115
     ]
    },
    {
     "days": 4,
     "median": [
      25.2966,
      6.0514,
      0.003
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 11.5 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.03
     ],
     "stars": 0,
     "worst": [
      34.0886,
      11.4778,
      0.0072
     ]
    },
    {
     "days": 5,
     "median": [
      25.5224,
      1.5773,
      0.0015
     ],
     "message": "Mission 4: 2 stars. The SLO holds on all 5 days with watermark=0.04, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 4: 3 stars. The SLO holds on all 5 days with watermark=0.04, the least kvsim's search finds.",
     "message_wrong": "Mission 4: 2 stars. The SLO holds on all 5 days with watermark=0.04, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      0.04
     ],
     "stars": 2,
     "worst": [
      34.3896,
      7.1736,
      0.0043
     ]
    },
    {
     "days": 5,
     "median": [
      25.7988,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.05.",
     "settings": [
      0.05
     ],
     "stars": 1,
     "worst": [
      34.9222,
      4.5386,
      0.0015
     ]
    },
    {
     "days": 5,
     "median": [
      26.7044,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.06.",
     "settings": [
      0.06
     ],
     "stars": 1,
     "worst": [
      35.7555,
      1.4347,
      0.0014
     ]
    },
    {
     "days": 4,
     "median": [
      27.0203,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 2: p95 time to first token 36.3s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.07
     ],
     "stars": 0,
     "worst": [
      36.2604,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      27.6529,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 2: p95 time to first token 36.4s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.08
     ],
     "stars": 0,
     "worst": [
      36.3897,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      28.3976,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 36.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.09
     ],
     "stars": 0,
     "worst": [
      36.603,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      28.8205,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 37s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.1
     ],
     "stars": 0,
     "worst": [
      36.9823,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      29.438,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 37.4s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.11
     ],
     "stars": 0,
     "worst": [
      37.3989,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      30.5342,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 38s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.12
     ],
     "stars": 0,
     "worst": [
      37.9872,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      31.1726,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 38.4s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.13
     ],
     "stars": 0,
     "worst": [
      38.4245,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      31.7079,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 38.8s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.14
     ],
     "stars": 0,
     "worst": [
      38.8321,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      32.4257,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 39.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.15
     ],
     "stars": 0,
     "worst": [
      39.611,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      32.743,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 39.9s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.16
     ],
     "stars": 0,
     "worst": [
      40.0652,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      33.7783,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 40.7s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.17
     ],
     "stars": 0,
     "worst": [
      40.7429,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      34.3099,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 41.5s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.18
     ],
     "stars": 0,
     "worst": [
      41.455,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      35.0006,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 42s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.19
     ],
     "stars": 0,
     "worst": [
      41.9771,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      35.8278,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 42.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.2
     ],
     "stars": 0,
     "worst": [
      42.5594,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      36.5085,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 36.5s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.21
     ],
     "stars": 0,
     "worst": [
      43.4358,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      37.6452,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 37.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.22
     ],
     "stars": 0,
     "worst": [
      43.925,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      38.6623,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 38.7s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.23
     ],
     "stars": 0,
     "worst": [
      44.357,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      39.6187,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 39.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.24
     ],
     "stars": 0,
     "worst": [
      45.0725,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      40.2005,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 40.2s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.25
     ],
     "stars": 0,
     "worst": [
      45.7877,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      41.067,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 41.1s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.26
     ],
     "stars": 0,
     "worst": [
      46.847,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      41.8888,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 41.9s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.27
     ],
     "stars": 0,
     "worst": [
      47.8834,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      43.1639,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 43.2s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.28
     ],
     "stars": 0,
     "worst": [
      48.4438,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      43.9704,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 44s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.29
     ],
     "stars": 0,
     "worst": [
      49.2165,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      45.1615,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 45.2s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.3
     ],
     "stars": 0,
     "worst": [
      50.3184,
      0.0,
      0.0
     ]
    }
   ],
   "slo": [
    {
     "decimals": 2,
     "key": "ttft_p95_s",
     "label": "p95 time to first token",
     "limit": 36.0,
     "scale": 1.0,
     "unit": "s"
    },
    {
     "decimals": 1,
     "key": "preemptions_per_1k",
     "label": "preemptions per 1,000 requests",
     "limit": 10.0,
     "scale": 1.0,
     "unit": ""
    },
    {
     "decimals": 2,
     "key": "share_paused_over_1s",
     "label": "share of users paused > 1 s",
     "limit": 0.01,
     "scale": 100.0,
     "unit": "%"
    }
   ],
   "slo_text": "p95 time to first token <= 36 s; preemptions per 1,000 requests <= 10; share of users paused > 1 s <= 1%",
   "title": "A burst on the shared GPU",
   "warmup_s": 120.0
  }
 ],
 "name_max": 32,
 "salt": "kvsim-missions-v2",
 "seeds": [
  0,
  1,
  2,
  3,
  4
 ],
 "version": 1
};
