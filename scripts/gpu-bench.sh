#!/usr/bin/env bash
# The GPU benchmark, for a lent GPU machine (prepare with scripts/prepare-gpu-bench.sh; run from the
# repo root with .device carried). A random-weight ~0.5B model made by the trainer's own init and
# export; decode tokens/s of the studio's decoder (webgpu over Vulkan, and cpu) against a bare
# onnxruntime loop and the memory-bandwidth limit; trainer steps on CUDA. Each part is independent
# and time-boxed; results land as JSON in $OUT.
set -u
OUT="${OUT:-/tmp/gpu-bench-out}"; W=/tmp/gpu-bench-work; mkdir -p "$OUT" "$W"
# At most 8 files come back from $OUT: the log and the JSON results go there, everything else to $W.
BW_GBS="${BW_GBS:-4800}"   # H200 HBM3e: 4.8 TB/s
SMALL="${SMALL:-0}"        # 1: a tiny model instead of 0.5B (to test this script on a CPU machine)
PY="${PY:-python3}"
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); lap() { echo "== [t+$(( $(date +%s) - T0 ))s] $*"; }

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

lap "random model: trainer test-model (tokenizer) + init + export"
M=/tmp/bench-model
$PY -m trainer test-model --out /tmp/bench-tok --seed 0 > "$W/test-model.jsonl" || echo "test-model failed"
if [ "$SMALL" = 1 ]; then
  cp -r /tmp/bench-tok "$M.ready" 2>/dev/null || true; rm -rf "$M"; mv "$M.ready" "$M"
else
  timeout 150 $PY -m trainer init --config bench/gpu/qwen05b.json --set "out_dir=\"$M\"" --set "model.tokenizer=\"/tmp/bench-tok\"" > "$W/init.jsonl" 2>"$W/init.err" || { echo "init failed"; tail -5 "$W/init.err"; }
  timeout 240 $PY -m trainer export --config bench/gpu/qwen05b.json --set "model.path=\"$M\"" --set "out_dir=\"$M\"" > "$W/export.jsonl" 2>"$W/export.err" || { echo "export failed"; tail -5 "$W/export.err"; }
fi
ls -la "$M" "$M/onnx" 2>&1 | head -20

lap "decode: webgpu"
timeout 150 $NODE .device/decode-bench.js "$M" webgpu 256 64 "$BW_GBS" "$OUT/decode-webgpu.json" > "$W/decode-webgpu.log" 2>&1 || echo "webgpu decode failed"; tail -40 "$W/decode-webgpu.log"
ARCH=qwen0.5b; [ "$SMALL" = 1 ] && ARCH=tiny
timeout 90 $PY -m trainer.bench --arch $ARCH --device auto --precision bf16 --seq 1024 --batch 8 --micro 4 --steps 6 > "$OUT/train-bf16.json" 2>"$W/train-bf16.err" || tail -5 "$W/train-bf16.err"; cat "$OUT/train-bf16.json"


lap "trainer: sft steps under torchrun on CUDA"
timeout 90 torchrun --nproc_per_node 1 --redirects 1 --tee 1 -m trainer sft --config bench/gpu/sft.json --set "model.path=\"/tmp/bench-tok\"" --set "out_dir=\"/tmp/bench-sft\"" > "$W/sft.log" 2>&1 || echo "sft failed"
grep -h '"event"' /tmp/bench-sft/events.jsonl 2>/dev/null | tail -4 | tee "$OUT/sft-events.jsonl"
lap "trainer: throughput on CUDA, fp32"
timeout 90 $PY -m trainer.bench --arch $ARCH --device auto --precision fp32 --seq 1024 --batch 8 --micro 4 --steps 6 > "$OUT/train-fp32.json" 2>"$W/train-fp32.err" || tail -5 "$W/train-fp32.err"; cat "$OUT/train-fp32.json"
lap "decode: cpu ($(nproc) cores)"
timeout 100 $NODE .device/decode-bench.js "$M" cpu 256 16 "$BW_GBS" "$OUT/decode-cpu.json" > "$W/decode-cpu.log" 2>&1 || echo "cpu decode failed"; tail -25 "$W/decode-cpu.log"

lap "done"
