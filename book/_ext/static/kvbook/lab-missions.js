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
    0.86,
    256
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
    },
    {
     "codes": [
      "256",
      "32",
      "16"
     ],
     "kind": "int",
     "label": "max_num_seqs (requests running at once)",
     "name": "max_num_seqs",
     "shown": [
      "256",
      "32",
      "16"
     ],
     "start": 256,
     "values": [
      256,
      32,
      16
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
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 19 > 10. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.6,
      256
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
      13.0982,
      138.322,
      0.0321
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 19 > 10. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      41.1799,
      280.7571,
      0.0661
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      11.2507,
      120.1814,
      0.0229
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 20.1 > 10. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.61,
      256
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
      11.4188,
      120.2749,
      0.0241
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 19 > 10. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.61,
      32
     ],
     "stars": 0,
     "worst": [
      34.3299,
      273.3964,
      0.0569
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.61,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      10.1634,
      114.5475,
      0.0275
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 13.4 > 10. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.62,
      256
     ],
     "stars": 0,
     "worst": [
      30.2155,
      266.0358,
      0.0568
     ]
    },
    {
     "days": 0,
     "median": [
      10.0861,
      117.984,
      0.0252
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 12.3 > 10. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.62,
      32
     ],
     "stars": 0,
     "worst": [
      29.8635,
      252.3659,
      0.059
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.62,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      7.9646,
      101.9473,
      0.0206
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 9.83s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.63,
      256
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
      8.0352,
      104.2383,
      0.0229
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 9.48s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.63,
      32
     ],
     "stars": 0,
     "worst": [
      26.7506,
      247.1083,
      0.064
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.63,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      6.902,
      89.5692,
      0.0136
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 7.91s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.64,
      256
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
      6.8768,
      81.6327,
      0.0147
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 8.15s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.64,
      32
     ],
     "stars": 0,
     "worst": [
      23.2006,
      253.4175,
      0.0527
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.64,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      5.1273,
      72.5624,
      0.0136
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 7.37s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.65,
      256
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
      4.9783,
      68.0272,
      0.0115
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 7.51s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      21.2493,
      252.3659,
      0.047
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7384,
      62.3583,
      0.008
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 6.49s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.66,
      256
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
      3.4863,
      60.0907,
      0.0079
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 6.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.66,
      32
     ],
     "stars": 0,
     "worst": [
      19.3711,
      232.387,
      0.0521
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.66,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      2.9604,
      44.6735,
      0.0057
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 5.45s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.67,
      256
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
      2.7106,
      44.6735,
      0.0034
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 5.39s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.67,
      32
     ],
     "stars": 0,
     "worst": [
      17.7138,
      230.2839,
      0.0467
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.67,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      2.2851,
      40.8163,
      0.0034
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.62s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.68,
      256
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
      2.1835,
      35.1474,
      0.0034
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.48s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.68,
      32
     ],
     "stars": 0,
     "worst": [
      15.5886,
      162.9863,
      0.0328
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.68,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      1.2057,
      25.2005,
      0.0045
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.33s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.69,
      256
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
      1.5105,
      25.2005,
      0.0034
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.26s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.69,
      32
     ],
     "stars": 0,
     "worst": [
      14.0436,
      115.6677,
      0.0264
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.69,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      0.8557,
      18.3276,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 2.61s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.7,
      256
     ],
     "stars": 0,
     "worst": [
      12.9022,
      119.8738,
      0.0233
     ]
    },
    {
     "days": 2,
     "median": [
      0.8944,
      16.0367,
      0.0023
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 2.51s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      12.685,
      80.9674,
      0.0137
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      0.7088,
      16.0367,
      0.0023
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 24.9 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.71,
      256
     ],
     "stars": 0,
     "worst": [
      11.3192,
      93.5857,
      0.0159
     ]
    },
    {
     "days": 2,
     "median": [
      0.8048,
      7.9365,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 2.06s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.71,
      32
     ],
     "stars": 0,
     "worst": [
      11.5494,
      50.4732,
      0.0085
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.71,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      0.385,
      13.6054,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 22.7 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.72,
      256
     ],
     "stars": 0,
     "worst": [
      10.2664,
      75.7098,
      0.0169
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 10.5s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.72,
      32
     ],
     "stars": 0,
     "worst": [
      10.4516,
      33.6488,
      0.0063
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.72,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      0.3454,
      12.4717,
      0.0011
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 17 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.73,
      256
     ],
     "stars": 0,
     "worst": [
      9.3948,
      67.2976,
      0.0148
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 9.88s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.73,
      32
     ],
     "stars": 0,
     "worst": [
      9.8812,
      32.5973,
      0.0053
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.73,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      0.2974,
      7.9365,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 13.6 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.74,
      256
     ],
     "stars": 0,
     "worst": [
      8.0187,
      64.143,
      0.0148
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.75s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.74,
      32
     ],
     "stars": 0,
     "worst": [
      8.7507,
      13.6698,
      0.0032
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.74,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 3,
     "median": [
      0.2886,
      5.7274,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 11.3 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.75,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.19s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      8.1936,
      5.2576,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2809,
      4.5819,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 5.74s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.76,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.76,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.76,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2786,
      3.4364,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 4.71s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.77,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.77,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.77,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2709,
      1.1455,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 4.16s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.78,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.78,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.78,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2702,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 3.7s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.79,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.79,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.79,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2702,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.34s > 2s. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.8,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 32.6 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.81,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.81,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.81,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 20 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.82,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.82,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.82,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 16.8 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.83,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.83,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.83,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 14.7 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.84,
      256
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
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.84,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.84,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2694,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 15.8 > 10. A pass on some days is luck, not a fix. KV usage pinned at the top while the waiting queue grows is the memory-bound signature: the cache is too small for this traffic, and every preemption trades one request for another. Only more KV capacity ends it.",
     "settings": [
      0.85,
      256
     ],
     "stars": 0,
     "worst": [
      0.3251,
      15.7729,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.86, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 1: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.86, the least kvsim's search finds.",
     "message_wrong": "Mission 1: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.86, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      0.86,
      256
     ],
     "stars": 2,
     "worst": [
      0.3059,
      8.4122,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.86,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.86,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.87,
      256
     ],
     "stars": 1,
     "worst": [
      0.2941,
      4.2061,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.87,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.87,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.88,
      256
     ],
     "stars": 1,
     "worst": [
      0.2937,
      1.0515,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.88,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.88,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.89,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.89,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.89,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.9,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.91,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.91,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.91,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.92,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.92,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.92,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.93,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.93,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.93,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.94,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.94,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.94,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
     "message": "Mission 1: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      0.95,
      256
     ],
     "stars": 1,
     "worst": [
      0.2918,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.8048,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 8.01s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      8.0145,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      82.4715,
      0.0,
      0.0
     ],
     "message": "Mission 1: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      130.9871,
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
   "debrief": "Swap copies run inside the step: on a shared 2 GB/s link one victim's blocks take twice as long to copy out as to recompute, they come back the same way, and every stream waits for both (chapter 3 computes the freeze). Recompute spends GPU time instead, so the tail of every stream shortens; memory then ends the queue. Keeping swap and buying more memory is a legitimate fix too: it ends the incident, at the price of more memory than recompute needs (one star, not two). vLLM V1 removed swap: upgrading is the recompute fix. The trap: replayed cold (2 minutes from an empty server, as this mission once was), gpu_memory_utilization=0.6 passes on all 5 days; after a 2-minute warm-up over 20 minutes it holds on 0 of 5 (seed 0: preemptions per 1,000 requests 119 > 100). The answer is gpu_memory_utilization=0.8.",
   "direction": "min",
   "duration_s": 1200.0,
   "expert": [
    "recompute",
    0.8
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
     0.8,
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
      164.8569,
      220.1426,
      0.1602,
      0.2945
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 61.1s > 30s. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
     "settings": [
      "swap",
      0.6
     ],
     "stars": 0,
     "worst": [
      264.5812,
      237.721,
      0.1786,
      0.2949
     ]
    },
    {
     "days": 1,
     "median": [
      98.9764,
      211.0793,
      0.1485,
      0.2989
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 90.3s > 30s. A pass on some days is luck, not a fix. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
     "settings": [
      "swap",
      0.65
     ],
     "stars": 0,
     "worst": [
      195.4699,
      232.8094,
      0.1674,
      0.2991
     ]
    },
    {
     "days": 1,
     "median": [
      41.9549,
      171.4286,
      0.1086,
      0.3026
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 41.8s > 30s. A pass on some days is luck, not a fix. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
     "settings": [
      "swap",
      0.7
     ],
     "stars": 0,
     "worst": [
      136.3033,
      188.1566,
      0.1277,
      0.3028
     ]
    },
    {
     "days": 1,
     "median": [
      16.5417,
      55.9921,
      0.0354,
      0.2519
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p99 inter-token gap 248ms > 200ms. A pass on some days is luck, not a fix. Every stream's worst gaps are the steps in which a victim's blocks cross the slow link: the copy runs inside the step and all streams wait for it. Look at how the server preempts, not only at how often.",
     "settings": [
      "swap",
      0.75
     ],
     "stars": 0,
     "worst": [
      93.5051,
      190.0669,
      0.1265,
      0.3075
     ]
    },
    {
     "days": 4,
     "median": [
      5.1585,
      21.0124,
      0.0128,
      0.1608
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 46.7s > 30s. A pass on some days is luck, not a fix. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
     "settings": [
      "swap",
      0.8
     ],
     "stars": 0,
     "worst": [
      46.6698,
      131.016,
      0.0894,
      0.3082
     ]
    },
    {
     "days": 4,
     "median": [
      0.3879,
      4.7755,
      0.0029,
      0.1608
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: share of users paused > 1 s 5.79% > 5%. A pass on some days is luck, not a fix. Pauses over a second are preempted requests waiting to resume: a bigger pool preempts fewer, and the preemption mode decides how long each waits.",
     "settings": [
      "swap",
      0.85
     ],
     "stars": 0,
     "worst": [
      23.6881,
      83.779,
      0.0579,
      0.3115
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
     "message": "Mission 2: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      "swap",
      0.9
     ],
     "stars": 1,
     "worst": [
      14.5712,
      28.5205,
      0.016,
      0.171
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
     "message": "Mission 2: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      "swap",
      0.95
     ],
     "stars": 1,
     "worst": [
      4.2421,
      13.369,
      0.008,
      0.1742
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
     "message": "Mission 2: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 119 > 100. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
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
     "message": "Mission 2: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 36.7s > 30s. A pass on some days is luck, not a fix. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
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
     "days": 3,
     "median": [
      19.4956,
      81.5324,
      0.0333,
      0.1544
     ],
     "message": "Mission 2: 0 stars. The SLO holds on 3 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 163 > 100. A pass on some days is luck, not a fix. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
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
     "message": "Mission 2: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 39.2s > 30s. A pass on some days is luck, not a fix. The queue and the preemptions come from a pool too small for the traffic; the preemption mode decides what each one costs.",
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
     "days": 5,
     "median": [
      3.5224,
      14.2857,
      0.0048,
      0.1594
     ],
     "message": "Mission 2: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.8, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 2: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.8, the least kvsim's search finds.",
     "message_wrong": "Mission 2: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.8, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      "recompute",
      0.8
     ],
     "stars": 2,
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
     "message": "Mission 2: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      "recompute",
      0.85
     ],
     "stars": 1,
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
     "message": "Mission 2: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
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
     "message": "Mission 2: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
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
     "limit": 30.0,
     "scale": 1.0,
     "unit": "s"
    },
    {
     "decimals": 1,
     "key": "preemptions_per_1k",
     "label": "preemptions per 1,000 requests",
     "limit": 100.0,
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
     "limit": 0.2,
     "scale": 1000.0,
     "unit": "ms"
    }
   ],
   "slo_text": "p95 time to first token <= 30 s; preemptions per 1,000 requests <= 100; share of users paused > 1 s <= 5%; p99 inter-token gap <= 200ms",
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
    0.6,
    256
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
    },
    {
     "codes": [
      "256",
      "32",
      "16"
     ],
     "kind": "int",
     "label": "max_num_seqs (requests running at once)",
     "name": "max_num_seqs",
     "shown": [
      "256",
      "32",
      "16"
     ],
     "start": 256,
     "values": [
      256,
      32,
      16
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
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 5.11s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      400,
      "fp16",
      0.6,
      256
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
      9.1964,
      123.5828,
      0.03
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 4.88s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      9.9303,
      213.4595,
      0.0351
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      4.9265,
      62.3583,
      0.0102
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 35.8 > 10. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      400,
      "fp16",
      0.65,
      256
     ],
     "stars": 0,
     "worst": [
      6.3024,
      71.4286,
      0.0137
     ]
    },
    {
     "days": 0,
     "median": [
      4.8403,
      58.9569,
      0.0091
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 39.1 > 10. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      6.3051,
      72.5624,
      0.0126
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      1.9449,
      28.3447,
      0.0043
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: preemptions per 1,000 requests 18.1 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      400,
      "fp16",
      0.7,
      256
     ],
     "stars": 0,
     "worst": [
      4.1366,
      34.3643,
      0.0069
     ]
    },
    {
     "days": 1,
     "median": [
      3.3916,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      5.0501,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      0.3464,
      12.4717,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 12.5 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      400,
      "fp16",
      0.75,
      256
     ],
     "stars": 0,
     "worst": [
      1.7613,
      18.9274,
      0.0032
     ]
    },
    {
     "days": 1,
     "median": [
      3.3916,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      5.0501,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2719,
      2.2676,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 17.9 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      400,
      "fp16",
      0.8,
      256
     ],
     "stars": 0,
     "worst": [
      0.4066,
      17.8759,
      0.0021
     ]
    },
    {
     "days": 1,
     "median": [
      3.3916,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      5.0501,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp16",
      0.85,
      256
     ],
     "stars": 1,
     "worst": [
      0.3161,
      4.2061,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.3916,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      5.0501,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp16",
      0.9,
      256
     ],
     "stars": 1,
     "worst": [
      0.2965,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.3916,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      5.0501,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp16",
      0.95,
      256
     ],
     "stars": 1,
     "worst": [
      0.2965,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.3916,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.32s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      5.0501,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      95.4973,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 57.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp16",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      113.4234,
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
      0.6,
      256
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
     "message": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 3: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds.",
     "message_wrong": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      400,
      "fp8",
      0.6,
      32
     ],
     "stars": 2,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.65,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.65,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.7,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.7,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.75,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.75,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.8,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.8,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.85,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.85,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.9,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.9,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.95,
      256
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      400,
      "fp8",
      0.95,
      32
     ],
     "stars": 1,
     "worst": [
      0.2516,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      14.4729,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 10.5s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      400,
      "fp8",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      20.8339,
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
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 34.1s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.6,
      256
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
      65.6788,
      317.2967,
      0.0987
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 34.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      85.3672,
      327.6644,
      0.0994
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      36.8431,
      330.1788,
      0.0784
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 14.8s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.65,
      256
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
      36.4808,
      330.1788,
      0.0784
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 14.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      51.2248,
      362.8118,
      0.0927
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      17.3858,
      326.5306,
      0.0712
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 7.25s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.7,
      256
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
      16.31,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 8.52s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      25.9525,
      2.2676,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      8.2165,
      155.3288,
      0.0283
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 3.55s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.75,
      256
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
      16.2314,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 8.52s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      25.9157,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      5.7567,
      61.2245,
      0.0125
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 20.1 > 10. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.8,
      256
     ],
     "stars": 0,
     "worst": [
      7.4315,
      89.3796,
      0.0161
     ]
    },
    {
     "days": 0,
     "median": [
      16.2314,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 8.52s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      25.9157,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      2.9485,
      31.746,
      0.0045
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 3.63s > 2s. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.85,
      256
     ],
     "stars": 0,
     "worst": [
      6.9842,
      41.9501,
      0.0107
     ]
    },
    {
     "days": 0,
     "median": [
      16.2314,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 8.52s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      25.9157,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      0.4721,
      16.0367,
      0.0023
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 2: preemptions per 1,000 requests 19.3 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.9,
      256
     ],
     "stars": 0,
     "worst": [
      5.3223,
      24.1851,
      0.0043
     ]
    },
    {
     "days": 0,
     "median": [
      16.2314,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 8.52s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      25.9157,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2956,
      5.6689,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 21 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      500,
      "fp16",
      0.95,
      256
     ],
     "stars": 0,
     "worst": [
      1.6503,
      21.0305,
      0.0053
     ]
    },
    {
     "days": 0,
     "median": [
      16.2314,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 8.52s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      25.9157,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      182.6051,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 126s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp16",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      192.7159,
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
     "message": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 3: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds.",
     "message_wrong": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      500,
      "fp8",
      0.6,
      256
     ],
     "stars": 2,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.65,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.7,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.75,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.8,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.85,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.9,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      500,
      "fp8",
      0.95,
      256
     ],
     "stars": 1,
     "worst": [
      0.2565,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.3814,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 2.4s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      2.399,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      80.0468,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 46.3s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      500,
      "fp8",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      97.8241,
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
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 87s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.6,
      256
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
      142.5627,
      323.0241,
      0.1052
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 87s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      158.4492,
      339.0023,
      0.1339
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      109.3896,
      349.2063,
      0.1016
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 60.1s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.65,
      256
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
      107.582,
      319.6635,
      0.1141
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 60.1s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      124.9411,
      351.4739,
      0.1241
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      77.3677,
      345.9516,
      0.1004
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 43.3s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.7,
      256
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
      72.8775,
      49.4217,
      0.0125
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 39.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      91.608,
      66.8934,
      0.0168
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      56.9398,
      338.591,
      0.0911
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 26.4s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.75,
      256
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
      70.8948,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 38.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      89.4653,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      42.0768,
      354.8753,
      0.093
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 15.1s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.8,
      256
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
      70.8948,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 38.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      89.4653,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      29.1115,
      339.0023,
      0.094
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.28s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.85,
      256
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
      70.8948,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 38.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      89.4653,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      17.201,
      328.7982,
      0.0831
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 4.63s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.9,
      256
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
      70.8948,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 38.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      89.4653,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      8.6596,
      197.2789,
      0.042
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 31.3 > 10. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      600,
      "fp16",
      0.95,
      256
     ],
     "stars": 0,
     "worst": [
      16.9949,
      319.6635,
      0.0658
     ]
    },
    {
     "days": 0,
     "median": [
      70.8948,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 38.6s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      89.4653,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      227.4302,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 178s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp16",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      244.6997,
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
     "message": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 3: 3 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds.",
     "message_wrong": "Mission 3: 2 stars. The SLO holds on all 5 days with gpu_memory_utilization=0.6, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      600,
      "fp8",
      0.6,
      256
     ],
     "stars": 2,
     "worst": [
      0.2702,
      1.0515,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.65,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.7,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.75,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.8,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.85,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.9,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      600,
      "fp8",
      0.95,
      256
     ],
     "stars": 1,
     "worst": [
      0.2705,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      3.7858,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.11s > 2s. A pass on some days is luck, not a fix. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      6.5727,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      146.253,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 92.2s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      600,
      "fp8",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      160.9108,
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
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 173s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.6,
      256
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
      230.2341,
      324.263,
      0.1703
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 173s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      248.5104,
      348.0726,
      0.1967
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      207.3967,
      342.4036,
      0.161
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 144s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.65,
      256
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
      206.9452,
      350.5155,
      0.1475
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 144s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      218.941,
      366.2132,
      0.175
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      185.4698,
      365.4066,
      0.1483
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.7,
      256
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
      181.9772,
      243.9537,
      0.1043
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 119s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      200.3752,
      268.7075,
      0.1154
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      164.7651,
      368.4807,
      0.1495
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 99.9s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.75,
      256
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
      167.5455,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 106s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      183.808,
      3.4014,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      144.2966,
      369.9885,
      0.1416
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 84.5s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.8,
      256
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
      167.5455,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 106s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      183.808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      127.1966,
      387.1707,
      0.1309
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 75.9s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.85,
      256
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
      167.5455,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 106s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      183.808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      113.5995,
      382.0862,
      0.1274
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 64.2s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.9,
      256
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
      167.5455,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 106s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      183.808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      100.3431,
      376.4458,
      0.1173
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 54.2s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp16",
      0.95,
      256
     ],
     "stars": 0,
     "worst": [
      121.2094,
      400.2268,
      0.1289
     ]
    },
    {
     "days": 0,
     "median": [
      167.5455,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 106s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      183.808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      295.7581,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp16",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      308.9744,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      0.3842,
      23.8095,
      0.0053
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 4.31s > 2s. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp8",
      0.6,
      256
     ],
     "stars": 0,
     "worst": [
      5.1136,
      41.9501,
      0.0069
     ]
    },
    {
     "days": 0,
     "median": [
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2662,
      1.1455,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 25.2 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp8",
      0.65,
      256
     ],
     "stars": 0,
     "worst": [
      1.8343,
      25.2366,
      0.0021
     ]
    },
    {
     "days": 0,
     "median": [
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      0.2631,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: preemptions per 1,000 requests 13.7 > 10. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      800,
      "fp8",
      0.7,
      256
     ],
     "stars": 0,
     "worst": [
      0.3184,
      13.6698,
      0.0021
     ]
    },
    {
     "days": 0,
     "median": [
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      800,
      "fp8",
      0.75,
      256
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
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      800,
      "fp8",
      0.8,
      256
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
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      800,
      "fp8",
      0.85,
      256
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
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      800,
      "fp8",
      0.9,
      256
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
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
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
     "message": "Mission 3: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less gpu_memory_utilization: step down and find the least that still holds on every day.",
     "settings": [
      800,
      "fp8",
      0.95,
      256
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
      23.4589,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 9.43s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      37.4808,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      218.4488,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 162s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      800,
      "fp8",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      234.5141,
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
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 315s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.6,
      256
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
      401.368,
      279.3296,
      0.277
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 315s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      412.5869,
      282.3129,
      0.3256
     ]
    },
    {
     "days": 0,
     "median": [
      417.7921,
      8.4122,
      0.0169
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      431.1615,
      18.1406,
      0.0276
     ]
    },
    {
     "days": 0,
     "median": [
      379.9781,
      296.0894,
      0.2919
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 300s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.65,
      256
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
      379.7119,
      297.0522,
      0.2779
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 299s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      388.1574,
      310.6576,
      0.3192
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      359.7193,
      304.9887,
      0.2817
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 281s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.7,
      256
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
      358.5653,
      310.4238,
      0.2866
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 281s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      377.5534,
      315.1927,
      0.322
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      339.1361,
      327.3743,
      0.2841
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 265s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.75,
      256
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
      339.1017,
      278.9116,
      0.2465
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 264s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      359.7943,
      313.8603,
      0.2869
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      325.7215,
      331.0658,
      0.2568
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 251s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.8,
      256
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
      326.273,
      188.2229,
      0.1545
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 253s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      347.6831,
      234.8225,
      0.1763
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      315.6104,
      346.9388,
      0.2356
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 244s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.85,
      256
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
      322.2772,
      33.2188,
      0.0263
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 248s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      334.7694,
      61.2245,
      0.0566
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      304.2794,
      337.8685,
      0.2434
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 232s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.9,
      256
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
      321.2241,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 247s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      333.4944,
      10.3093,
      0.0075
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      295.1327,
      345.2514,
      0.2494
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 226s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp16",
      0.95,
      256
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
      321.2241,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 247s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      333.4944,
      1.1455,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      417.4299,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 340s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp16",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      430.5893,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      180.3948,
      457.0447,
      0.2031
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 93.4s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.6,
      256
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
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.6,
      32
     ],
     "stars": 0,
     "worst": [
      229.1526,
      8.0183,
      0.0051
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.6,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      150.8709,
      497.7324,
      0.1945
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 69.6s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.65,
      256
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
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.65,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.65,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      122.1723,
      501.1338,
      0.1631
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 48s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.7,
      256
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
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.7,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.7,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      98.1655,
      477.6632,
      0.1582
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 31.6s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.75,
      256
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
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.75,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.75,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      76.7952,
      476.3407,
      0.1618
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 18.5s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.8,
      256
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
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.8,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.8,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      58.6382,
      468.98,
      0.1429
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 4.56s > 2s. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.85,
      256
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
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.85,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.85,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      42.0833,
      435.3312,
      0.1248
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 21.2 > 10. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.9,
      256
     ],
     "stars": 0,
     "worst": [
      98.0601,
      488.6621,
      0.1477
     ]
    },
    {
     "days": 0,
     "median": [
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.9,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.9,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
      0.0,
      0.0
     ]
    },
    {
     "days": 1,
     "median": [
      28.8318,
      423.7645,
      0.1207
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 1 of 5 days of traffic; on seed 1: p95 time to first token 28.8s > 2s. A pass on some days is luck, not a fix. Each request now holds more KV than before the release: lower what each one holds (the answer cap the product allows, a smaller KV dtype) before buying memory or admitting fewer.",
     "settings": [
      null,
      "fp8",
      0.95,
      256
     ],
     "stars": 0,
     "worst": [
      83.9176,
      486.3946,
      0.1329
     ]
    },
    {
     "days": 0,
     "median": [
      203.1372,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 121s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.95,
      32
     ],
     "stars": 0,
     "worst": [
      228.9973,
      0.0,
      0.0
     ]
    },
    {
     "days": 0,
     "median": [
      348.5387,
      0.0,
      0.0
     ],
     "message": "Mission 3: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: p95 time to first token 276s > 2s. A lower max_num_seqs admits fewer requests at once: preemptions fall, but the waiting queue grows and the time to first token pays for it. It adds no KV capacity, so it moves the wait instead of ending it.",
     "settings": [
      null,
      "fp8",
      0.95,
      16
     ],
     "stars": 0,
     "worst": [
      363.7352,
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
   "debrief": "Too little headroom and running requests are evicted mid-answer; too much and new requests queue while blocks sit free. Between them lies a band; its edges move with the burst and the answer lengths, which is why another team's limits rarely fit. In a real server, step max_num_seqs down from the value that preempts and stop at the first that holds the preemption counter near zero. Replayed cold (2 minutes from an empty server, as this mission once was), watermark=0.05 passes on all 5 days; the cold band is 0.05 to 0.3, the warm band 0.05 to 0.15 (after a 2-minute warm-up over 10 minutes): a band found cold is not the band.",
   "direction": "min",
   "duration_s": 600.0,
   "expert": [
    0.05
   ],
   "flags": "V0's block manager kept a 1% watermark; vLLM V1 had none until a `watermark` scheduler option (PR #44594, mid-2026, off by default): on older V1 releases approximate it with --max-num-seqs, stepped down from the value that preempts",
   "key": "burst",
   "levers": [
    {
     "codes": [
      "0",
      "0.05",
      "0.1",
      "0.15",
      "0.2",
      "0.25",
      "0.3"
     ],
     "kind": "float",
     "label": "admission headroom (watermark)",
     "name": "watermark",
     "shown": [
      "0.00",
      "0.05",
      "0.10",
      "0.15",
      "0.20",
      "0.25",
      "0.30"
     ],
     "start": 0.0,
     "values": [
      0.0,
      0.05,
      0.1,
      0.15,
      0.2,
      0.25,
      0.3
     ]
    }
   ],
   "number": 4,
   "pass_band": [
    [
     0.05,
     0.15
    ]
   ],
   "resource": "watermark",
   "right_bands": [
    [
     0.0,
     0.1
    ],
    [
     0.0,
     0.15
    ],
    [
     0.0,
     0.2
    ],
    [
     0.05,
     0.1
    ],
    [
     0.05,
     0.15
    ],
    [
     0.05,
     0.2
    ],
    [
     0.1,
     0.1
    ],
    [
     0.1,
     0.15
    ],
    [
     0.1,
     0.2
    ]
   ],
   "right_causes": [
    "headroom"
   ],
   "rows": [
    {
     "days": 0,
     "median": [
      39.0381,
      168.1877,
      0.037
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 0 of 5 days of traffic; on seed 0: preemptions per 1,000 requests 43.7 > 10. Running requests are evicted mid-answer: admission fills the cache to the brim during the burst. Keep more of it free.",
     "settings": [
      0.0
     ],
     "stars": 0,
     "worst": [
      40.2131,
      322.9036,
      0.085
     ]
    },
    {
     "days": 5,
     "median": [
      40.6118,
      0.0,
      0.0
     ],
     "message": "Mission 4: 2 stars. The SLO holds on all 5 days with watermark=0.05, the least kvsim's search finds. Commit a prediction before running for the third.",
     "message_right": "Mission 4: 3 stars. The SLO holds on all 5 days with watermark=0.05, the least kvsim's search finds.",
     "message_wrong": "Mission 4: 2 stars. The SLO holds on all 5 days with watermark=0.05, the least kvsim's search finds. Your prediction was not right: see the debrief.",
     "settings": [
      0.05
     ],
     "stars": 2,
     "worst": [
      40.8828,
      6.2578,
      0.0051
     ]
    },
    {
     "days": 5,
     "median": [
      43.4389,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less watermark: step down and find the least that still holds on every day.",
     "settings": [
      0.1
     ],
     "stars": 1,
     "worst": [
      44.3362,
      0.0,
      0.0
     ]
    },
    {
     "days": 5,
     "median": [
      46.637,
      0.0,
      0.0
     ],
     "message": "Mission 4: 1 star. The SLO holds on all 5 days, but kvsim's search holds it with less watermark: step down and find the least that still holds on every day.",
     "settings": [
      0.15
     ],
     "stars": 1,
     "worst": [
      53.0393,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      50.5152,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 67.7s > 60s. A pass on some days is luck, not a fix. New requests wait in the queue while blocks sit free: admission keeps more headroom than the burst needs. Keep less of it free.",
     "settings": [
      0.2
     ],
     "stars": 0,
     "worst": [
      67.66,
      0.0,
      0.0
     ]
    },
    {
     "days": 4,
     "median": [
      53.8146,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 4 of 5 days of traffic; on seed 3: p95 time to first token 85.7s > 60s. A pass on some days is luck, not a fix. New requests wait in the queue while blocks sit free: admission keeps more headroom than the burst needs. Keep less of it free.",
     "settings": [
      0.25
     ],
     "stars": 0,
     "worst": [
      85.7282,
      0.0,
      0.0
     ]
    },
    {
     "days": 2,
     "median": [
      60.3795,
      0.0,
      0.0
     ],
     "message": "Mission 4: 0 stars. The SLO holds on 2 of 5 days of traffic; on seed 1: p95 time to first token 62.3s > 60s. A pass on some days is luck, not a fix. New requests wait in the queue while blocks sit free: admission keeps more headroom than the burst needs. Keep less of it free.",
     "settings": [
      0.3
     ],
     "stars": 0,
     "worst": [
      105.873,
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
     "limit": 60.0,
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
   "slo_text": "p95 time to first token <= 60 s; preemptions per 1,000 requests <= 10; share of users paused > 1 s <= 1%",
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
