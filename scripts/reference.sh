#!/bin/sh
# Writes scenarios/reference/<policy>.yaml from base.yaml.in: the same cluster
# and workload, one file per policy. Run it after editing base.yaml.in.
set -eu
cd "$(dirname "$0")/../scenarios/reference"

gen() { # policy sharing-block policy-block
    sed -e "s|@POLICY@|$1|" base.yaml.in |
        awk -v sharing="$2" -v block="$3" '
            /^@SHARING@$/ { if (sharing != "") print sharing; next }
            /^@POLICY_BLOCK@$/ { print block; next }
            { print }' >"$1.yaml"
}

gen dedicated "" "  name: dedicated
  inference_gpus: 80"
# tidal: the day window covers the hours whose mean load needs more than the
# night pool (56 cards): chat's ServeGen hour 22:00-23:00 still averages 87 % of
# its peak (1,491 of 1,709 req/s), so the day ends at 23:00, not 22:00.
gen tidal "" "  name: tidal
  inference_gpus: 56
  day_gpus: 72
  day: \"09:00-23:00\""
gen adaptive "" "  name: adaptive
  inference_gpus: 32"
gen kueue "" "  name: kueue
  inference_gpus: 72
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  priorities: { inference: 1000, training: 100 }"
gen kai "  sharing: timeslice
  timeSlicing: { replicas: 2 }" "  name: kai
  inference_gpus: 48
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  gpu_fraction: { inference: 0.5 }"
gen timeslice "  sharing: timeslice
  timeSlicing: { replicas: 2 }" "  name: timeslice
  inference_gpus: 48
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  # Inference priority, not the device plugin's equal share: with equal 2 ms
  # slices a 40-110 ms LLM batch beside a training job runs in every other slice
  # (about twice its latency). While a replica is on the card its context gets
  # 10 ms slices (MEDIUM) and training 2 ms (SHORT); training keeps the whole
  # card whenever the replica is idle (the scheduler is work-conserving).
  share: inference-priority
  inference_slice: 10ms
  training_slice: 2ms
  # Training is best effort: when the HPA cannot place a replica, a job is
  # evicted (graceful) and its card held for the replica.
  evict: true
  pack: most-allocated
  # One replica and one training job per card (2 slots): a third tenant would
  # add a turn to every round-robin wait.
  max_training_per_card: 1
  inference_spread: true
  # No memory isolation under time-slicing: the scheduler sums memory itself.
  check_memory: true"
gen mps "  sharing: mps
  mps: { replicas: 2 }" "  name: mps
  inference_gpus: 48
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  # Inference priority: the inference client runs uncapped and a training
  # client is capped at 25 % of the threads only while a replica shares its
  # card (uncapped on a card of its own). The device plugin's equal share
  # ('share: equal-share', 1/N each) leaves inference at most half the SMs
  # beside a training job.
  share: inference-priority
  thread_pct: { inference: 100, training: 100, training_shared: 25 }
  # Training is best effort: evicted (graceful) when the HPA cannot place a
  # replica, its card held for the replica.
  evict: true
  pack: most-allocated
  max_training_per_card: 1
  inference_spread: true
  # MPS pins each client to card memory / replicas: refuse what would not fit.
  check_memory: true"
gen mig-static "  sharing: mig
  mig: { layout: 7g.80gb }" "  name: mig-static
  inference_gpus: 64
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  layouts:
    - { nodes: \"0-11\", layout: \"4g.40gb+3g.40gb\" }
    - { nodes: \"12-15\", layout: 7g.80gb }"
