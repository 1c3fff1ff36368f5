#!/usr/bin/env bash
# The GPU run, for a lent GPU machine (prepare with scripts/prepare-gpu-bench.sh; run from the repo root
# with .device carried). Two jobs, each part time-boxed under one deadline; results land in $OUT:
# 1. the default policy's SFT (when .device/default holds the job `npm run train:default -- --until init`
#    prepared): init with the recipe's seed, a short probe for the seconds per step, then SFT on CUDA with
#    as many of the recipe's steps as fit SFT_BUDGET_S; the final weights come back as default-sft.tar.
# 2. the GPU benchmark: a random-weight ~0.5B model made by the trainer's own init and export; decode
#    tokens/s of the studio's decoder (webgpu over Vulkan, and cpu) against a bare onnxruntime loop and
#    the memory-bandwidth limit; trainer steps on CUDA (bf16 and fp32 throughput, sft under torchrun).
set -u
OUT="${OUT:-/tmp/gpu-bench-out}"; W=/tmp/gpu-bench-work; mkdir -p "$OUT" "$W"
# At most 8 files come back from $OUT: the log, the JSON results and the SFT tarball go there, the rest to $W.
BW_GBS="${BW_GBS:-4800}"           # H200 HBM3e: 4.8 TB/s
SMALL="${SMALL:-0}"                # 1: a tiny model instead of 0.5B (to test this script on a CPU machine)
DEADLINE_S="${DEADLINE_S:-530}"    # every part ends before this many seconds from the start
SFT_BUDGET_S="${SFT_BUDGET_S:-170}"
SFT_DEVICE="${SFT_DEVICE:-cuda}"
PROBE_STEPS="${PROBE_STEPS:-16}"
SFT_EXTRA="${SFT_EXTRA:-}"      # more --set arguments for both SFT runs (a CPU trial: --set train.batch_size=2 ...)
PY="${PY:-python3}"
REPO=$PWD
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); lap() { echo "== [t+$(( $(date +%s) - T0 ))s] $*"; }
# box N: N seconds, or what is left before the deadline (less a margin), whichever is smaller.
box() { local left=$(( DEADLINE_S - ($(date +%s) - T0) - 5 )); [ "$left" -lt "$1" ] && echo $(( left > 1 ? left : 1 )) || echo "$1"; }

lap "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee "$W/gpu.txt"
$PY -c 'import torch,sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())'

lap "loaders and node"
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in .device/gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
NODE=$(command -v node || true)
if [ -z "$NODE" ]; then xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node && NODE=/tmp/node; fi
LIB=.device/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
[ -e "$LIB" ] || xz -dk "$LIB.xz"
$NODE --version

if [ -d .device/default ]; then
  lap "default policy: init + SFT on $SFT_DEVICE (budget ${SFT_BUDGET_S}s)"
  D=/tmp/default-work; rm -rf "$D"; cp -r .device/default "$D"; xz -d "$D/rows/demonstrations.jsonl.xz"
  trainer() { (cd "$D" && PYTHONPATH="$REPO" timeout "$1" "$PY" -m trainer "${@:2}"); }
  trainer "$(box 60)" init --config init-config.json > "$D/init.jsonl" 2> "$D/init.err" || { echo "init failed"; tail -5 "$D/init.err"; }
  P0=$(date +%s)
  trainer "$(box 90)" sft --config sft-config.json --device "$SFT_DEVICE" --set 'out_dir="probe"' --set train.steps=$PROBE_STEPS --set train.log_every=1 $SFT_EXTRA \
    --set train.checkpoint_every=1000 --set train.export_at_end=false > "$D/probe.jsonl" 2> "$D/probe.err" || { echo "probe failed"; tail -5 "$D/probe.err"; }
  STARTUP=$(( $(date +%s) - P0 ))
  # Seconds per step: the median of the probe's later two thirds (the first steps warm up the kernels).
  STEPS=$($PY - "$D/probe.jsonl" "$D/sft-config.json" "$(( SFT_BUDGET_S - STARTUP ))" <<'PYEOF'
import json, sys
steps = [e["seconds"] for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "step"]
steps = steps[len(steps) // 3:]
want = json.load(open(sys.argv[2]))["train"]["steps"]
if not steps: print(0); sys.exit()
per = sorted(steps)[len(steps) // 2]
print(max(0, min(want, int(int(sys.argv[3]) / (per * 1.1)))))
PYEOF
)
  echo "probe: startup ${STARTUP}s; $(grep -c '"step"' "$D/probe.jsonl") steps; running $STEPS steps"
  if [ "${STEPS:-0}" -gt 0 ]; then
    trainer "$(box $(( SFT_BUDGET_S + 60 )))" sft --config sft-config.json --device "$SFT_DEVICE" --set "train.steps=$STEPS" \
      --set train.export_at_end=false $SFT_EXTRA > "$D/sft.jsonl" 2> "$D/sft.err" || { echo "sft failed"; tail -5 "$D/sft.err"; }
    grep '"event":"step"' "$D/sft.jsonl" | awk 'NR % 10 == 0' | cut -c1-220; tail -2 "$D/sft.jsonl" | cut -c1-300
    tar -C "$D" -cf "$OUT/default-sft.tar" sft/final sft/events.jsonl init.jsonl probe.jsonl sft.err && ls -la "$OUT/default-sft.tar"
  fi
fi

lap "random model: trainer test-model (tokenizer) + init + export"
M=/tmp/bench-model
$PY -m trainer test-model --out /tmp/bench-tok --seed 0 > "$W/test-model.jsonl" || echo "test-model failed"
if [ "$SMALL" = 1 ]; then
  rm -rf "$M"; cp -r /tmp/bench-tok "$M"
else
  timeout "$(box 90)" $PY -m trainer init --config bench/gpu/qwen05b.json --set "out_dir=\"$M\"" --set "model.tokenizer=\"/tmp/bench-tok\"" > "$W/init.jsonl" 2>"$W/init.err" || { echo "init failed"; tail -5 "$W/init.err"; }
  timeout "$(box 150)" $PY -m trainer export --config bench/gpu/qwen05b.json --set "model.path=\"$M\"" --set "out_dir=\"$M\"" > "$W/export.jsonl" 2>"$W/export.err" || { echo "export failed"; tail -5 "$W/export.err"; }
fi
ls -la "$M" "$M/onnx" 2>&1 | head -20

lap "decode: webgpu"
timeout "$(box 120)" $NODE .device/decode-bench.js "$M" webgpu 256 64 "$BW_GBS" "$OUT/decode-webgpu.json" > "$W/decode-webgpu.log" 2>&1 || echo "webgpu decode failed"; tail -40 "$W/decode-webgpu.log"

ARCH=qwen0.5b; [ "$SMALL" = 1 ] && ARCH=tiny
lap "trainer: throughput on CUDA, bf16"
timeout "$(box 60)" $PY -m trainer.bench --arch $ARCH --device auto --precision bf16 --seq 1024 --batch 8 --micro 4 --steps 6 > "$OUT/train-bf16.json" 2>"$W/train-bf16.err" || tail -5 "$W/train-bf16.err"; cat "$OUT/train-bf16.json"

lap "trainer: sft steps under torchrun on CUDA"
timeout "$(box 60)" $PY -m torch.distributed.run --nproc_per_node 1 --redirects 1 --tee 1 --monitor_interval 0.2 -m trainer sft --config bench/gpu/sft.json --set "model.path=\"/tmp/bench-tok\"" --set "out_dir=\"/tmp/bench-sft\"" > "$W/sft.log" 2>&1 || { echo "sft under torchrun failed"; tail -5 "$W/sft.log"; }
grep -h '"event"' /tmp/bench-sft/events.jsonl 2>/dev/null | tail -4 | tee "$OUT/sft-events.jsonl"

lap "trainer: throughput on CUDA, fp32"
timeout "$(box 60)" $PY -m trainer.bench --arch $ARCH --device auto --precision fp32 --seq 1024 --batch 8 --micro 4 --steps 6 > "$OUT/train-fp32.json" 2>"$W/train-fp32.err" || tail -5 "$W/train-fp32.err"; cat "$OUT/train-fp32.json"

lap "decode: cpu ($(nproc) cores)"
timeout "$(box 60)" $NODE .device/decode-bench.js "$M" cpu 256 16 "$BW_GBS" "$OUT/decode-cpu.json" > "$W/decode-cpu.log" 2>&1 || echo "cpu decode failed"; tail -25 "$W/decode-cpu.log"

lap "done"
