/* The lab's missions, every grid point scored by kvsim.lab.missions.score():
 * written by scripts/site_data.py (kvsim.book.lab_site); do not edit. */
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
   "debrief": "KV usage pinned at the top while the waiting queue grows is the memory-bound signature: every preemption frees one request's blocks for another. Only added capacity escapes the trade-off. Ask for memory in the smallest step that ends the storm on every day of traffic, not on the lucky one. The trap: replayed cold (2 minutes from an empty server, as this mission once was), gpu_memory_utilization=0.75 passes on all 5 days; after a 2-minute warm-up over 10 minutes it holds on 3 of 5 (seed 1: preemptions per 1,000 requests 11.3 > 10). The answer is gpu_memory_utilization=0.86.",
   "direction": "min",
   "duration_s": 600.0,
   "expert": [
    0.86
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
     0.86,
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
      13.2627,
      139.4558,
      0.0321
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 19 > 10.",
     "settings": [
      0.6
     ],
     "stars": 0,
     "worst": [
      41.6584,
      266.0358,
      0.0661
     ]
    },
    {
     "days": 0,
     "median": [
      11.2507,
      120.1814,
      0.0229
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 20.1 > 10.",
     "settings": [
      0.61
     ],
     "stars": 0,
     "worst": [
      35.1639,
      263.9327,
      0.0626
     ]
    },
    {
     "days": 0,
     "median": [
      10.1634,
      114.5475,
      0.0275
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 13.4 > 10.",
     "settings": [
      0.62
     ],
     "stars": 0,
     "worst": [
      30.2155,
      266.0358,
      0.0568
     ]
    },
    {
     "days": 1,
     "median": [
      7.9646,
      101.9473,
      0.0206
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 9.83s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.63
     ],
     "stars": 0,
     "worst": [
      26.5486,
      257.6236,
      0.0575
     ]
    },
    {
     "days": 1,
     "median": [
      6.902,
      89.5692,
      0.0136
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 7.91s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.64
     ],
     "stars": 0,
     "worst": [
      23.5539,
      243.9537,
      0.0548
     ]
    },
    {
     "days": 1,
     "median": [
      5.1273,
      72.5624,
      0.0136
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 7.37s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.65
     ],
     "stars": 0,
     "worst": [
      21.3353,
      243.9537,
      0.047
     ]
    },
    {
     "days": 1,
     "median": [
      3.7384,
      62.3583,
      0.008
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 6.49s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.66
     ],
     "stars": 0,
     "worst": [
      19.4291,
      255.5205,
      0.0521
     ]
    },
    {
     "days": 1,
     "median": [
      2.9604,
      44.6735,
      0.0057
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 5.45s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.67
     ],
     "stars": 0,
     "worst": [
      17.7504,
      213.4595,
      0.0382
     ]
    },
    {
     "days": 1,
     "median": [
      2.2851,
      40.8163,
      0.0034
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.62s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.68
     ],
     "stars": 0,
     "worst": [
      15.6862,
      157.7287,
      0.0307
     ]
    },
    {
     "days": 1,
     "median": [
      1.2057,
      25.2005,
      0.0045
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.33s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.69
     ],
     "stars": 0,
     "worst": [
      14.1608,
      156.6772,
      0.0317
     ]
    },
    {
     "days": 1,
     "median": [
      0.8557,
      18.3276,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 2.61s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.7
     ],
     "stars": 0,
     "worst": [
      12.9022,
      119.8738,
      0.0233
     ]
    },
    {
     "days": 1,
     "median": [
      0.7088,
      16.0367,
      0.0023
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 24.9 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.71
     ],
     "stars": 0,
     "worst": [
      11.3192,
      93.5857,
      0.0159
     ]
    },
    {
     "days": 1,
     "median": [
      0.385,
      13.6054,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 22.7 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.72
     ],
     "stars": 0,
     "worst": [
      10.2664,
      75.7098,
      0.0169
     ]
    },
    {
     "days": 1,
     "median": [
      0.3454,
      12.4717,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 17 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.73
     ],
     "stars": 0,
     "worst": [
      9.3948,
      67.2976,
      0.0148
     ]
    },
    {
     "days": 3,
     "median": [
      0.2974,
      7.9365,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 13.6 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.74
     ],
     "stars": 0,
     "worst": [
      8.0187,
      64.143,
      0.0148
     ]
    },
    {
     "days": 3,
     "median": [
      0.2886,
      5.7274,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 11.3 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.75
     ],
     "stars": 0,
     "worst": [
      6.849,
      48.3701,
      0.0084
     ]
    },
    {
     "days": 4,
     "median": [
      0.2809,
      4.5819,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 5.74s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.76
     ],
     "stars": 0,
     "worst": [
      5.7385,
      51.5247,
      0.0105
     ]
    },
    {
     "days": 4,
     "median": [
      0.2786,
      3.4364,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 4.71s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.77
     ],
     "stars": 0,
     "worst": [
      4.7101,
      48.3701,
      0.0084
     ]
    },
    {
     "days": 4,
     "median": [
      0.2709,
      1.1455,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 4.16s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.78
     ],
     "stars": 0,
     "worst": [
      4.1646,
      41.0095,
      0.0116
     ]
    },
    {
     "days": 4,
     "median": [
      0.2702,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 3.7s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.79
     ],
     "stars": 0,
     "worst": [
      3.7029,
      46.2671,
      0.0105
     ]
    },
    {
     "days": 4,
     "median": [
      0.2702,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.34s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      0.8
     ],
     "stars": 0,
     "worst": [
      2.3433,
      35.7518,
      0.0074
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 32.6 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.81
     ],
     "stars": 0,
     "worst": [
      1.5315,
      32.5973,
      0.0084
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 20 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.82
     ],
     "stars": 0,
     "worst": [
      0.8488,
      19.979,
      0.0032
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 16.8 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.83
     ],
     "stars": 0,
     "worst": [
      0.4885,
      16.8244,
      0.0021
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 14.7 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.84
     ],
     "stars": 0,
     "worst": [
      0.3738,
      14.7213,
      0.0021
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 15.8 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.85
     ],
     "stars": 0,
     "worst": [
      0.3251,
      15.7729,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.86, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 1: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.86, the least kvsim's search finds.",
     "message_wrong": "Mission 1: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.86, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      0.86
     ],
     "stars": 2,
     "worst": [
      0.3059,
      8.4122,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.87.",
     "settings": [
      0.87
     ],
     "stars": 1,
     "worst": [
      0.2941,
      4.2061,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.88.",
     "settings": [
      0.88
     ],
     "stars": 1,
     "worst": [
      0.2937,
      1.0515,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.89.",
     "settings": [
      0.89
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.9.",
     "settings": [
      0.9
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.91.",
     "settings": [
      0.91
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.92.",
     "settings": [
      0.92
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.93.",
     "settings": [
      0.93
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.94.",
     "settings": [
      0.94
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.86, less than your 0.95.",
     "settings": [
      0.95
     ],
     "stars": 1,
     "worst": [
      0.2918,
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
   "debrief": "Swap copies run inside the step: on a shared 4 GB/s link one victim's blocks take longer to copy than several decode steps, and every stream waits for them (chapter 3 computes the freeze). Recompute spends GPU time instead, chunked into steps that were running anyway, so the tail of every stream shortens; memory then ends the queue. vLLM V1 removed swap: upgrading is the same fix. The trap: replayed cold (2 minutes from an empty server, as this mission once was), gpu_memory_utilization=0.6 passes on all 5 days; after a 2-minute warm-up over 20 minutes it holds on 0 of 5 (seed 0: preemptions per 1,000 requests 119 > 80). The answer is gpu_memory_utilization=0.85.",
   "direction": "min",
   "duration_s": 1200.0,
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
      117.8251,
      246.6667,
      0.1325,
      0.24
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 29.5s > 25s.",
     "settings": [
      "swap",
      0.6
     ],
     "stars": 0,
     "worst": [
      219.1517,
      263.2613,
      0.1586,
      0.2401
     ]
    },
    {
     "days": 1,
     "median": [
      58.1577,
      221.0216,
      0.1179,
      0.2445
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 51.2s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.65
     ],
     "stars": 0,
     "worst": [
      153.8181,
      224.4508,
      0.1364,
      0.2446
     ]
    },
    {
     "days": 1,
     "median": [
      25.8949,
      101.1788,
      0.0486,
      0.1867
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 89.5 > 80. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.7
     ],
     "stars": 0,
     "worst": [
      97.6294,
      196.7526,
      0.1174,
      0.2489
     ]
    },
    {
     "days": 2,
     "median": [
      13.1454,
      55.0098,
      0.0258,
      0.1855
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: p99 inter-token gap 189ms > 180ms. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.75
     ],
     "stars": 0,
     "worst": [
      55.8731,
      173.7968,
      0.0911,
      0.2533
     ]
    },
    {
     "days": 4,
     "median": [
      4.2526,
      15.2818,
      0.0067,
      0.1605
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 29.8s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.8
     ],
     "stars": 0,
     "worst": [
      29.7539,
      119.4296,
      0.0677,
      0.2574
     ]
    },
    {
     "days": 4,
     "median": [
      0.3106,
      3.8204,
      0.002,
      0.16
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p99 inter-token gap 197ms > 180ms. A pass on some days is luck, not a fix.",
     "settings": [
      "swap",
      0.85
     ],
     "stars": 0,
     "worst": [
      19.8713,
      48.1283,
      0.0223,
      0.1967
     ]
    },
    {
     "days": 5,
     "median": [
      0.2704,
      1.9048,
      0.0,
      0.1598
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.9.",
     "settings": [
      "swap",
      0.9
     ],
     "stars": 1,
     "worst": [
      10.5281,
      24.9554,
      0.0125,
      0.1706
     ]
    },
    {
     "days": 5,
     "median": [
      0.2675,
      0.0,
      0.0,
      0.1598
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.95.",
     "settings": [
      "swap",
      0.95
     ],
     "stars": 1,
     "worst": [
      2.6742,
      12.4777,
      0.0089,
      0.1741
     ]
    },
    {
     "days": 0,
     "median": [
      83.9247,
      251.4286,
      0.1062,
      0.2401
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 119 > 80.",
     "settings": [
      "recompute",
      0.6
     ],
     "stars": 0,
     "worst": [
      185.25,
      255.4028,
      0.1309,
      0.2401
     ]
    },
    {
     "days": 1,
     "median": [
      38.9789,
      200.0,
      0.0727,
      0.2444
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 36.7s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.65
     ],
     "stars": 0,
     "worst": [
      121.1348,
      243.553,
      0.1168,
      0.2446
     ]
    },
    {
     "days": 2,
     "median": [
      19.4956,
      81.5324,
      0.0333,
      0.1544
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 163 > 80. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.7
     ],
     "stars": 0,
     "worst": [
      73.7934,
      204.9911,
      0.0982,
      0.2489
     ]
    },
    {
     "days": 4,
     "median": [
      10.1728,
      49.1159,
      0.0172,
      0.1574
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 39.2s > 25s. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.75
     ],
     "stars": 0,
     "worst": [
      39.1916,
      184.492,
      0.0723,
      0.2532
     ]
    },
    {
     "days": 4,
     "median": [
      3.5224,
      14.2857,
      0.0048,
      0.1594
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 86.5 > 80. A pass on some days is luck, not a fix.",
     "settings": [
      "recompute",
      0.8
     ],
     "stars": 0,
     "worst": [
      24.1965,
      86.4528,
      0.0401,
      0.1691
     ]
    },
    {
     "days": 5,
     "median": [
      0.3024,
      3.8204,
      0.0019,
      0.1598
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
      15.7379,
      39.2157,
      0.0143,
      0.1664
     ]
    },
    {
     "days": 5,
     "median": [
      0.2704,
      1.9048,
      0.0,
      0.1598
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.9.",
     "settings": [
      "recompute",
      0.9
     ],
     "stars": 1,
     "worst": [
      8.2828,
      24.0642,
      0.008,
      0.1699
     ]
    },
    {
     "days": 5,
     "median": [
      0.2675,
      0.0,
      0.0,
      0.1598
     ],
     "message": "Mission 2: 1 star. The SLO holds on all 5 days; kvsim's search passes with gpu_memory_utilization=0.85, less than your 0.95.",
     "settings": [
      "recompute",
      0.95
     ],
     "stars": 1,
     "worst": [
      2.3476,
      8.0214,
      0.0036,
      0.1723
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
      9.1555,
      126.9841,
      0.0265
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 5.11s > 2s.",
     "settings": [
      400,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      10.0544,
      214.511,
      0.0397
     ]
    },
    {
     "days": 0,
     "median": [
      4.9265,
      62.3583,
      0.0102
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 35.8 > 10.",
     "settings": [
      400,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      6.3024,
      71.4286,
      0.0137
     ]
    },
    {
     "days": 1,
     "median": [
      1.9449,
      28.3447,
      0.0043
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 18.1 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      400,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      4.1366,
      34.3643,
      0.0069
     ]
    },
    {
     "days": 2,
     "median": [
      0.3464,
      12.4717,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 12.5 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      400,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      1.7613,
      18.9274,
      0.0032
     ]
    },
    {
     "days": 4,
     "median": [
      0.2719,
      2.2676,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 17.9 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      400,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      0.4066,
      17.8759,
      0.0021
     ]
    },
    {
     "days": 5,
     "median": [
      0.2688,
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
      0.3161,
      4.2061,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2688,
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
      0.2965,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2688,
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
      0.2965,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2413,
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
      0.2508,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      66.2867,
      315.4574,
      0.0899
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 34.1s > 2s.",
     "settings": [
      500,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      85.8725,
      324.263,
      0.1008
     ]
    },
    {
     "days": 0,
     "median": [
      36.8431,
      330.1788,
      0.0784
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 14.8s > 2s.",
     "settings": [
      500,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      51.7397,
      360.5442,
      0.0964
     ]
    },
    {
     "days": 0,
     "median": [
      17.3858,
      326.5306,
      0.0712
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 7.25s > 2s.",
     "settings": [
      500,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      25.7365,
      334.3849,
      0.0739
     ]
    },
    {
     "days": 0,
     "median": [
      8.2165,
      155.3288,
      0.0283
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 3.55s > 2s.",
     "settings": [
      500,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      11.5216,
      263.9327,
      0.0488
     ]
    },
    {
     "days": 0,
     "median": [
      5.7567,
      61.2245,
      0.0125
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 20.1 > 10.",
     "settings": [
      500,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      7.4315,
      89.3796,
      0.0161
     ]
    },
    {
     "days": 1,
     "median": [
      2.9485,
      31.746,
      0.0045
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.63s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      500,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      6.9842,
      41.9501,
      0.0107
     ]
    },
    {
     "days": 2,
     "median": [
      0.4721,
      16.0367,
      0.0023
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 19.3 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      500,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      5.3223,
      24.1851,
      0.0043
     ]
    },
    {
     "days": 4,
     "median": [
      0.2956,
      5.6689,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 21 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      500,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      1.6503,
      21.0305,
      0.0053
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2439,
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
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      143.1529,
      328.7514,
      0.114
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 87s > 2s.",
     "settings": [
      600,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      159.4758,
      336.7347,
      0.131
     ]
    },
    {
     "days": 0,
     "median": [
      109.3896,
      349.2063,
      0.1016
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 60.1s > 2s.",
     "settings": [
      600,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      123.8151,
      352.6077,
      0.1272
     ]
    },
    {
     "days": 0,
     "median": [
      77.3677,
      345.9516,
      0.1004
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 43.3s > 2s.",
     "settings": [
      600,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      96.5353,
      372.2795,
      0.1126
     ]
    },
    {
     "days": 0,
     "median": [
      56.9398,
      338.591,
      0.0911
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 26.4s > 2s.",
     "settings": [
      600,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      75.5652,
      375.2834,
      0.1062
     ]
    },
    {
     "days": 0,
     "median": [
      42.0768,
      354.8753,
      0.093
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 15.1s > 2s.",
     "settings": [
      600,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      55.7316,
      366.2132,
      0.0981
     ]
    },
    {
     "days": 0,
     "median": [
      29.1115,
      339.0023,
      0.094
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.28s > 2s.",
     "settings": [
      600,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      40.352,
      364.8791,
      0.0988
     ]
    },
    {
     "days": 0,
     "median": [
      17.201,
      328.7982,
      0.0831
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 4.63s > 2s.",
     "settings": [
      600,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      27.7817,
      344.9001,
      0.0983
     ]
    },
    {
     "days": 0,
     "median": [
      8.6596,
      197.2789,
      0.042
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 31.3 > 10.",
     "settings": [
      600,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      16.9949,
      319.6635,
      0.0658
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2702,
      1.0515,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.253,
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
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      231.191,
      336.7347,
      0.1691
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 173s > 2s.",
     "settings": [
      800,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      248.4446,
      339.0023,
      0.2071
     ]
    },
    {
     "days": 0,
     "median": [
      207.3967,
      342.4036,
      0.161
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 144s > 2s.",
     "settings": [
      800,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      219.1779,
      353.9519,
      0.1838
     ]
    },
    {
     "days": 0,
     "median": [
      185.4698,
      365.4066,
      0.1483
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s.",
     "settings": [
      800,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      201.7461,
      369.6145,
      0.1678
     ]
    },
    {
     "days": 0,
     "median": [
      164.7651,
      368.4807,
      0.1495
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 99.9s > 2s.",
     "settings": [
      800,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      181.9609,
      390.0227,
      0.1639
     ]
    },
    {
     "days": 0,
     "median": [
      144.2966,
      369.9885,
      0.1416
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 84.5s > 2s.",
     "settings": [
      800,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      164.9516,
      386.6213,
      0.155
     ]
    },
    {
     "days": 0,
     "median": [
      127.1966,
      387.1707,
      0.1309
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 75.9s > 2s.",
     "settings": [
      800,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      147.7289,
      394.5578,
      0.1564
     ]
    },
    {
     "days": 0,
     "median": [
      113.5995,
      382.0862,
      0.1274
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 64.2s > 2s.",
     "settings": [
      800,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      133.3477,
      397.9592,
      0.1409
     ]
    },
    {
     "days": 0,
     "median": [
      100.3431,
      376.4458,
      0.1173
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 54.2s > 2s.",
     "settings": [
      800,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      121.2094,
      400.2268,
      0.1289
     ]
    },
    {
     "days": 1,
     "median": [
      0.3842,
      23.8095,
      0.0053
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.31s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      800,
      "fp8",
      0.6
     ],
     "stars": 0,
     "worst": [
      5.1136,
      41.9501,
      0.0069
     ]
    },
    {
     "days": 4,
     "median": [
      0.2662,
      1.1455,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 25.2 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      800,
      "fp8",
      0.65
     ],
     "stars": 0,
     "worst": [
      1.8343,
      25.2366,
      0.0021
     ]
    },
    {
     "days": 4,
     "median": [
      0.2631,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 13.7 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      800,
      "fp8",
      0.7
     ],
     "stars": 0,
     "worst": [
      0.3184,
      13.6698,
      0.0021
     ]
    },
    {
     "days": 5,
     "median": [
      0.2631,
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
      0.2855,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2631,
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
      0.2855,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2631,
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
      0.2855,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2631,
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
      0.2855,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      0.2631,
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
      0.2855,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      401.3448,
      273.2426,
      0.3051
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 315s > 2s.",
     "settings": [
      null,
      "fp16",
      0.6
     ],
     "stars": 0,
     "worst": [
      412.5867,
      289.1156,
      0.3217
     ]
    },
    {
     "days": 0,
     "median": [
      379.9781,
      296.0894,
      0.2919
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 300s > 2s.",
     "settings": [
      null,
      "fp16",
      0.65
     ],
     "stars": 0,
     "worst": [
      388.1295,
      300.4535,
      0.3333
     ]
    },
    {
     "days": 0,
     "median": [
      359.7193,
      304.9887,
      0.2817
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 281s > 2s.",
     "settings": [
      null,
      "fp16",
      0.7
     ],
     "stars": 0,
     "worst": [
      377.7077,
      318.5941,
      0.3075
     ]
    },
    {
     "days": 0,
     "median": [
      339.1361,
      327.3743,
      0.2841
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 265s > 2s.",
     "settings": [
      null,
      "fp16",
      0.75
     ],
     "stars": 0,
     "worst": [
      360.8644,
      335.6009,
      0.2963
     ]
    },
    {
     "days": 0,
     "median": [
      325.7215,
      331.0658,
      0.2568
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 251s > 2s.",
     "settings": [
      null,
      "fp16",
      0.8
     ],
     "stars": 0,
     "worst": [
      349.3708,
      339.0023,
      0.291
     ]
    },
    {
     "days": 0,
     "median": [
      315.6104,
      346.9388,
      0.2356
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s.",
     "settings": [
      null,
      "fp16",
      0.85
     ],
     "stars": 0,
     "worst": [
      330.5791,
      351.9553,
      0.2824
     ]
    },
    {
     "days": 0,
     "median": [
      304.2794,
      337.8685,
      0.2434
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 232s > 2s.",
     "settings": [
      null,
      "fp16",
      0.9
     ],
     "stars": 0,
     "worst": [
      321.1184,
      350.3401,
      0.266
     ]
    },
    {
     "days": 0,
     "median": [
      295.1327,
      345.2514,
      0.2494
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 226s > 2s.",
     "settings": [
      null,
      "fp16",
      0.95
     ],
     "stars": 0,
     "worst": [
      311.7043,
      361.678,
      0.2506
     ]
    },
    {
     "days": 0,
     "median": [
      180.3948,
      457.0447,
      0.2031
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 93.4s > 2s.",
     "settings": [
      null,
      "fp8",
      0.6
     ],
     "stars": 0,
     "worst": [
      215.6163,
      489.7959,
      0.2078
     ]
    },
    {
     "days": 0,
     "median": [
      150.8709,
      497.7324,
      0.1945
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 69.6s > 2s.",
     "settings": [
      null,
      "fp8",
      0.65
     ],
     "stars": 0,
     "worst": [
      195.6209,
      506.8027,
      0.2162
     ]
    },
    {
     "days": 0,
     "median": [
      122.1723,
      501.1338,
      0.1631
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 48s > 2s.",
     "settings": [
      null,
      "fp8",
      0.7
     ],
     "stars": 0,
     "worst": [
      174.6267,
      532.8798,
      0.1958
     ]
    },
    {
     "days": 0,
     "median": [
      98.1655,
      477.6632,
      0.1582
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31.6s > 2s.",
     "settings": [
      null,
      "fp8",
      0.75
     ],
     "stars": 0,
     "worst": [
      149.2439,
      517.0068,
      0.181
     ]
    },
    {
     "days": 0,
     "median": [
      76.7952,
      476.3407,
      0.1618
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 18.5s > 2s.",
     "settings": [
      null,
      "fp8",
      0.8
     ],
     "stars": 0,
     "worst": [
      130.9167,
      515.873,
      0.1657
     ]
    },
    {
     "days": 0,
     "median": [
      58.6382,
      468.98,
      0.1429
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 4.56s > 2s.",
     "settings": [
      null,
      "fp8",
      0.85
     ],
     "stars": 0,
     "worst": [
      116.0408,
      502.2676,
      0.1585
     ]
    },
    {
     "days": 0,
     "median": [
      42.0833,
      435.3312,
      0.1248
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 21.2 > 10.",
     "settings": [
      null,
      "fp8",
      0.9
     ],
     "stars": 0,
     "worst": [
      98.0601,
      488.6621,
      0.1477
     ]
    },
    {
     "days": 1,
     "median": [
      28.8318,
      423.7645,
      0.1207
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 28.8s > 2s. A pass on some days is luck, not a fix.",
     "settings": [
      null,
      "fp8",
      0.95
     ],
     "stars": 0,
     "worst": [
      83.9176,
      486.3946,
      0.1329
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
   "debrief": "Too little headroom and running requests are evicted mid-answer; too much and new requests queue while blocks sit free. Between them lies a band; its edges move with the burst and the answer lengths, which is why another team's limits rarely fit. In a real server, step max_num_seqs down from the value that preempts and stop at the first that holds the preemption counter near zero. Replayed cold (2 minutes from an empty server, as this mission once was), watermark=0.05 passes on all 5 days; the cold band is 0.05 to 0.1, the warm band 0.04 to 0.09 (after a 2-minute warm-up over 10 minutes): a band found cold is not the band.",
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
     0.09
    ]
   ],
   "resource": "watermark",
   "right_bands": [
    [
     0.03,
     0.08
    ],
    [
     0.03,
     0.09
    ],
    [
     0.03,
     0.1
    ],
    [
     0.04,
     0.08
    ],
    [
     0.04,
     0.09
    ],
    [
     0.04,
     0.1
    ],
    [
     0.05,
     0.08
    ],
    [
     0.05,
     0.09
    ],
    [
     0.05,
     0.1
    ]
   ],
   "right_causes": [
    "headroom"
   ],
   "rows": [
    {
     "days": 0,
     "median": [
      24.2268,
      95.3101,
      0.0272
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 42.2 > 10.",
     "settings": [
      0.0
     ],
     "stars": 0,
     "worst": [
      33.212,
      146.3415,
      0.0387
     ]
    },
    {
     "days": 0,
     "median": [
      24.0277,
      39.3343,
      0.0091
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 17.2 > 10.",
     "settings": [
      0.01
     ],
     "stars": 0,
     "worst": [
      32.834,
      57.3888,
      0.0143
     ]
    },
    {
     "days": 2,
     "median": [
      24.1767,
      16.6163,
      0.003
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 19.7 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.02
     ],
     "stars": 0,
     "worst": [
      32.7698,
      21.5208,
      0.0072
     ]
    },
    {
     "days": 4,
     "median": [
      24.4328,
      6.3091,
      0.0015
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 11.5 > 10. A pass on some days is luck, not a fix.",
     "settings": [
      0.03
     ],
     "stars": 0,
     "worst": [
      33.2043,
      11.4778,
      0.0045
     ]
    },
    {
     "days": 5,
     "median": [
      24.7777,
      4.5317,
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
      33.4867,
      7.1736,
      0.0043
     ]
    },
    {
     "days": 5,
     "median": [
      24.8911,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.05.",
     "settings": [
      0.05
     ],
     "stars": 1,
     "worst": [
      34.1164,
      3.0257,
      0.0014
     ]
    },
    {
     "days": 5,
     "median": [
      25.5552,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.06.",
     "settings": [
      0.06
     ],
     "stars": 1,
     "worst": [
      34.4031,
      1.5129,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      25.7958,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.07.",
     "settings": [
      0.07
     ],
     "stars": 1,
     "worst": [
      35.0631,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      26.3776,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.08.",
     "settings": [
      0.08
     ],
     "stars": 1,
     "worst": [
      35.4573,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      27.5307,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days; kvsim's search passes with watermark=0.04, less than your 0.09.",
     "settings": [
      0.09
     ],
     "stars": 1,
     "worst": [
      35.8575,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      27.9087,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 2: p95 time to first token 36s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.1
     ],
     "stars": 0,
     "worst": [
      36.0307,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      28.4659,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 36.2s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.11
     ],
     "stars": 0,
     "worst": [
      36.2459,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      29.1121,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 36.9s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.12
     ],
     "stars": 0,
     "worst": [
      36.9468,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      29.922,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 37.3s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.13
     ],
     "stars": 0,
     "worst": [
      37.2973,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      30.5889,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 37.5s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.14
     ],
     "stars": 0,
     "worst": [
      37.8605,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      31.1685,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 38.1s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.15
     ],
     "stars": 0,
     "worst": [
      38.1269,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      31.8765,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 38.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.16
     ],
     "stars": 0,
     "worst": [
      38.6192,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      32.3072,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 39.4s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.17
     ],
     "stars": 0,
     "worst": [
      39.3999,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      32.8062,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 40s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.18
     ],
     "stars": 0,
     "worst": [
      39.9747,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      33.7557,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 40.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.19
     ],
     "stars": 0,
     "worst": [
      40.6032,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      34.1771,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 41.1s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.2
     ],
     "stars": 0,
     "worst": [
      41.108,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      34.9039,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 41.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.21
     ],
     "stars": 0,
     "worst": [
      41.6022,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      35.903,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: p95 time to first token 42.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.22
     ],
     "stars": 0,
     "worst": [
      42.639,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      36.8763,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 36.9s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.23
     ],
     "stars": 0,
     "worst": [
      43.0669,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      37.922,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 37.9s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.24
     ],
     "stars": 0,
     "worst": [
      43.5388,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      38.5196,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 38.5s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.25
     ],
     "stars": 0,
     "worst": [
      44.374,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      39.5626,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 39.6s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.26
     ],
     "stars": 0,
     "worst": [
      45.192,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      40.2832,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 40.3s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.27
     ],
     "stars": 0,
     "worst": [
      46.2033,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      41.3386,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 41.3s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.28
     ],
     "stars": 0,
     "worst": [
      47.1111,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      42.0835,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 42.1s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.29
     ],
     "stars": 0,
     "worst": [
      47.7643,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      43.2096,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 43.2s > 36s. A pass on some days is luck, not a fix.",
     "settings": [
      0.3
     ],
     "stars": 0,
     "worst": [
      48.145,
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
