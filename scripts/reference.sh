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
gen tidal "" "  name: tidal
  inference_gpus: 56
  day_gpus: 72
  day: \"09:00-22:00\""
gen adaptive "" "  name: adaptive
  inference_gpus: 32"
