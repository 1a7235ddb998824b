#!/usr/bin/env bash
# Builds and runs tma_box_stream_bandwidth on a GPU machine; writes
# OUT_DIR/tma_box_stream_bandwidth.json (OUT_DIR defaults to validation/data/h100/microbench) with
# its provenance. Usage: run_tma_box_stream.sh [OUT_DIR]
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/run_compute_microbench.sh" "${1:-$here/../data/h100/microbench}" tma_box_stream_bandwidth
