#!/usr/bin/env bash
# Prepares .device/ (gitignored) for scripts/gpu-bench.sh on a lent GPU machine, which reaches no
# registry and may lack Node: this machine's node binary (xz), onnxruntime-node's Linux x64 binaries
# (CPU + WebGPU ship inside the package), the decode benchmark bundle, and the Vulkan/EGL loader
# packages from Debian (the GPU machine's image lacks libvulkan). Everything here is < 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
D=.device
rm -rf "$D" && mkdir -p "$D/node_modules" "$D/gl"
xz -T0 -6 -c "$(readlink -f "$(command -v node)")" > "$D/node.xz"
for pkg in onnxruntime-node onnxruntime-common; do
  mkdir -p "$D/node_modules/$pkg"
  cp node_modules/$pkg/package.json "$D/node_modules/$pkg/"
  cp -r node_modules/$pkg/dist "$D/node_modules/$pkg/"
done
mkdir -p "$D/node_modules/onnxruntime-node/bin/napi-v6/linux"
cp -r node_modules/onnxruntime-node/bin/napi-v6/linux/x64 "$D/node_modules/onnxruntime-node/bin/napi-v6/linux/"
xz -T0 -6 "$D/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
npx esbuild bench/gpu/decode.ts --bundle --platform=node --target=node20 --format=cjs --external:onnxruntime-node --outfile="$D/decode-bench.js" --log-level=warning
( o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p /tmp/amd64/partial; apt-get $o update -qq
  cd "$D/gl" && apt-get $o download -qq libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 )

# The default policy's SFT job, when `npm run train:default -- --until init` has prepared it: the
# trainer configs (paths relative to the work folder), the tokenizer and the rows (xz; < 1 MB).
WORK=.rehearsal/training/default
if [ -f "$WORK/sft-config.json" ] && [ -f "$WORK/init-config.json" ]; then
  mkdir -p "$D/default/rows"
  cp -r "$WORK/tokenizer" "$WORK/init-config.json" "$WORK/sft-config.json" "$D/default/"
  xz -T0 -6 -c "$WORK/rows/demonstrations.jsonl" > "$D/default/rows/demonstrations.jsonl.xz"
  du -sh "$D/default"
fi
du -sh "$D"
