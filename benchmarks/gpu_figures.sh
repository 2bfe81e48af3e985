#!/usr/bin/env bash
# The GPU figures in BENCHMARKS.md ("On a GPU"), taken on a CUDA machine (not a test).
#
#   bash benchmarks/gpu_figures.sh kernels OUT          # Triton kernel tests compiled on the GPU, their bandwidth
#   bash benchmarks/gpu_figures.sh small OUT [TOKDIR]   # bundled engine, SmolLM2-135M shape: the CPU benchmark's ramps
#   bash benchmarks/gpu_figures.sh large OUT [TOKDIR [FLAG…]]  # bundled engine, Llama-3.1-8B shape: ramp + /metrics scrapes
#   bash benchmarks/gpu_figures.sh predict OUT [TOKDIR] # predict_accuracy --quick on the SmolLM2 shape (#16 on a GPU)
#
# `large` with FLAGs serves with them (e.g. `--max-num-seqs 4`): the measured side of a
# `servops predict --ramp OUT/ramp.json --change "FLAG…"` made beforehand from the run without.
# Each part fits one 10-minute command. The engine parts serve benchmarks.synthetic_model
# checkpoints (random weights of the named shape, tokenizer from TOKDIR or the embedded SmolLM2):
# the GPU machines here have no network and take 64 MiB of files, so neither the 98 MB GGUF nor
# an 8B checkpoint can travel, and a forward pass costs the same whatever the weights hold.
# The image there has torch, Triton and transformers but not all of servops's needs: carry pydantic,
# pydantic-core, annotated-types, typing-inspection, prometheus-api-client, dateparser, tzlocal,
# brotli, gguf, requests, and locust with its needs (gevent, greenlet, geventhttpclient, flask,
# flask-cors, flask-login, pyzmq, configargparse, itsdangerous, blinker, python-socketio,
# python-engineio, simple-websocket, wsproto, bidict, zope.event, zope.interface) as wheels, in the
# versions of .venv, and put them and the checkout on PYTHONPATH before calling this script.
# `large` scrapes /metrics every 5 s during its ramp, so `servops triage --metrics A --metrics B`
# can be run afterwards on any pair (the floors of docs/triage.md against a measured GPU).
set -uo pipefail
usage="usage: gpu_figures.sh kernels|small|large|predict OUT [TOKDIR [FLAG…]]"
part=${1:?$usage}
out=${2:?$usage}
tok=${3:-}
shift $(($# < 3 ? $# : 3))
flags=("$@")
py=${PYTHON:-python3}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.csv"
"$py" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' >>"$out/gpu.csv"
tokflag=()
[ -n "$tok" ] && tokflag=(--tokenizer-from "$tok")

case "$part" in
kernels)
    # compiled Triton on CUDA (the suite runs these under the interpreter without a GPU)
    timeout 300 "$py" -m pytest -q -p no:cacheprovider tests/unit/servops_kernels/test_paged_decode.py \
        tests/unit/servops_kernels/test_paged_prefill.py tests/unit/servops_kernels/test_cache_write.py \
        tests/unit/servops_kernels/test_attention_backend.py >"$out/kernel-tests.txt" 2>&1
    echo "kernel tests rc=$?" | tee -a "$out/kernel-tests.txt"
    timeout 280 "$py" benchmarks/attention.py --device cuda --json "$out/attention.json" >"$out/attention.txt" 2>&1
    echo "attention rc=$?"
    ;;
small)
    "$py" -m benchmarks.synthetic_model --shape smollm2-135m "${tokflag[@]}" --out /tmp/smollm2-shape || exit 1
    timeout 540 "$py" -m benchmarks.engine_vs_vllm --only bundled --model /tmp/smollm2-shape --step-s 10 \
        --out "$out/smollm2" 2>"$out/smollm2.log"
    echo "smollm2 rc=$?"
    ;;
predict)
    # eight servers started and ramped in turn (about 60 s each on an H100 host); the folder comes back as one
    # archive, since the device tool returns at most eight files. Read it with
    # `predict_accuracy --recorded --engine bundled --model … --out` on the unpacked folder.
    [ -f /tmp/smollm2-shape/config.json ] ||
        "$py" -m benchmarks.synthetic_model --shape smollm2-135m "${tokflag[@]}" --out /tmp/smollm2-shape || exit 1
    cp /tmp/smollm2-shape/config.json "$out/config.json"
    rm -rf /tmp/predict-gpu
    timeout 480 "$py" -m benchmarks.predict_accuracy --engine bundled --quick --model /tmp/smollm2-shape \
        --out /tmp/predict-gpu >"$out/predict.txt" 2>&1
    echo "predict rc=$?" | tee -a "$out/predict.txt"
    tar -czf "$out/predict.tgz" -C /tmp predict-gpu
    ;;
large)
    # one checkpoint for every flag set of a machine's session (writing 15 GB takes a minute)
    [ -f /tmp/llama8b-shape/config.json ] ||
        "$py" -m benchmarks.synthetic_model --shape llama-3.1-8b "${tokflag[@]}" --out /tmp/llama8b-shape || exit 1
    cp /tmp/llama8b-shape/config.json "$out/config.json"
    url=http://127.0.0.1:8011
    "$py" -m engine serve /tmp/llama8b-shape --port 8011 --max-model-len 2048 "${flags[@]}" >"$out/server.log" 2>&1 &
    server=$!
    for _ in $(seq 300); do
        curl -sf "$url/health" >/dev/null && break
        kill -0 "$server" 2>/dev/null || { echo "server exited; see $out/server.log" >&2; exit 1; }
        sleep 1
    done
    rm -rf /tmp/scrapes && mkdir -p /tmp/scrapes
    "$py" -m advisor ramp --endpoint "$url" --concurrency 1,4,16,64 --step-seconds 20 --warmup-seconds 5 \
        --input-len uniform:64:32 --output-len uniform:64:16 --seed 20 --request-timeout 120 \
        --json "$out/ramp.json" >"$out/ramp.txt" 2>&1 &
    ramp=$!
    while kill -0 "$ramp" 2>/dev/null; do
        curl -sf "$url/metrics" >"/tmp/scrapes/$(date +%s).prom"
        sleep 5
    done
    wait "$ramp"
    echo "ramp rc=$?"
    tar -czf "$out/scrapes.tgz" -C /tmp scrapes
    kill "$server"
    wait "$server"
    ;;
*)
    echo "gpu_figures.sh: unknown part $part; use kernels, small, large or predict" >&2
    exit 2
    ;;
esac
