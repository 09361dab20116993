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
  pack: most-allocated
  max_training_per_card: 1
  inference_spread: true
  check_memory: true"
gen mps "  sharing: mps
  mps: { replicas: 2 }" "  name: mps
  inference_gpus: 48
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  thread_pct: { inference: 50, training: 100 }
  pack: most-allocated
  max_training_per_card: 1
  check_memory: true"
gen mig-static "  sharing: mig
  mig: { layout: 7g.80gb }" "  name: mig-static
  inference_gpus: 64
  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }
  layouts:
    - { nodes: \"0-11\", layout: \"4g.40gb+3g.40gb\" }
    - { nodes: \"12-15\", layout: 7g.80gb }"
