"""``model_slots.onnx``: the decoder with its KV cache in place, for the policy host's slot batching.

The main graph (``model.onnx``, Optimum's layout) takes the past keys and values and returns them again
with the new tokens appended: every decode step copies the whole cache, and rows of different lengths
share a pass only padded to the longest. This graph is built with ``onnx.helper`` around onnxruntime's
``GroupQueryAttention`` (com.microsoft), which writes the new keys and values into the cache buffer it
is given and reads each row's own length only:

- inputs ``input_ids [batch, sequence]``, ``seqlens_k [batch]`` (int32: each row's tokens after this
  pass, minus one), ``total_sequence_length`` (int32 scalar: ``sequence`` for a first prompt, the
  longest row's tokens after this pass otherwise), ``logits_rows [batch]`` (int64: which position of
  the flattened ``batch x sequence`` each row's logits are read at), ``past_key_values.{i}.key|value
  [batch, kv_heads, cache_length, head_dim]``;
- outputs ``logits [batch, 1, vocab]`` (one position a row: a prompt's last token, not every one) and
  ``present.{i}.key|value``, the same shape as the past. The host binds each present to its past's own
  memory, so nothing is copied: a row's cache is a slot of one buffer, reused when its sequence ends.

Rows of a first prompt (no past) may be of different lengths, padded on the right (``seqlens_k`` is
each row's own length minus one); a prompt after a past is one row (onnxruntime's kernel takes a batch
of one there); a decode step is any number of rows, one token each, at their own lengths. Rotary
positions follow from ``seqlens_k`` (onnxruntime computes them), so there is no ``position_ids``.

The weights are the main graph's own initializers: each is matched by value and referenced where it
lies (``model.onnx_data`` when the weights are external), so the folder holds them once.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import EXIT_RUNTIME, TrainerError

if TYPE_CHECKING:
    from ..model.llama import LlamaForCausalLM

SLOTS_FILE = "model_slots.onnx"
#: onnxruntime's contrib domain (GroupQueryAttention).
MS_DOMAIN = "com.microsoft"
OPSET = 17


def slots_supported(model: LlamaForCausalLM) -> str | None:
    """Why this model cannot have a slots graph, or None when it can."""
    c = model.config
    if c.num_attention_heads % c.num_key_value_heads:
        return "its query heads are not a multiple of its key-value heads"
    if c.head_dim % 2:
        return "its head size is odd (rotary embedding)"
    return None


class _Builder:
    """Nodes, initializers and the shared-weight lookup of one graph."""

    def __init__(self, shared: dict[bytes, TensorProto]) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self.shared = shared
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def weight(self, name: str, array: np.ndarray) -> str:
        """An initializer: the main graph's own (same bytes, same external location) when it has one."""
        array = np.ascontiguousarray(array, dtype=np.float32)
        found = self.shared.get(_key(array))
        if found is not None:
            proto = TensorProto()
            proto.CopyFrom(found)
            proto.name = name
        else:
            proto = numpy_helper.from_array(array, name)
        self.inits.append(proto)
        return name

    def const(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs: list[str], outputs: int = 1, domain: str = "", **attrs: Any) -> list[str]:
        outs = [self.name(op_type) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name(op_type), domain=domain, **attrs))
        return outs

    def rms_norm(self, x: str, weight: str, eps: float) -> str:
        # The decomposition onnxruntime fuses into SimplifiedLayerNormalization.
        sq = self.op("Pow", [x, "two"])[0]
        mean = self.op("ReduceMean", [sq], axes=[-1], keepdims=1)[0]
        std = self.op("Sqrt", [self.op("Add", [mean, self.const(self.name("eps"), np.array(eps, np.float32))])[0]])[0]
        return self.op("Mul", [weight, self.op("Div", [x, std])[0]])[0]

    def linear(self, x: str, module: Any, prefix: str) -> str:
        out = self.op("MatMul", [x, self.weight(f"{prefix}.weight", module.weight.detach().numpy().T)])[0]
        if getattr(module, "bias", None) is not None:
            out = self.op("Add", [out, self.weight(f"{prefix}.bias", module.bias.detach().numpy())])[0]
        return out


def _key(array: np.ndarray) -> bytes:
    return str(array.shape).encode() + array.tobytes()


def _shared_initializers(main_path: str) -> dict[bytes, TensorProto]:
    """The main graph's initializers by value, each as its unloaded proto (external data stays a reference)."""
    loaded = onnx.load(main_path)
    bare = {t.name: t for t in onnx.load(main_path, load_external_data=False).graph.initializer}
    out: dict[bytes, TensorProto] = {}
    for t in loaded.graph.initializer:
        if t.data_type == TensorProto.FLOAT:
            array = numpy_helper.to_array(t)
            out[_key(array)] = bare[t.name]
            if array.ndim == 2:  # tied embedding: the same matrix, transposed for lm_head, may be only one of them
                out.setdefault(_key(np.ascontiguousarray(array)), bare[t.name])
    return out


def build_slots_graph(model: LlamaForCausalLM, main_path: str, out_path: str) -> int:
    """Writes ``out_path`` beside ``main_path`` (whose weights it references); returns its size in bytes."""
    why = slots_supported(model)
    if why:
        raise TrainerError("EXPORT_FAILED", f"No slots graph for this model: {why}.", EXIT_RUNTIME)
    c = model.config
    kv, heads, d = c.num_key_value_heads, c.num_attention_heads, c.head_dim
    rep = heads // kv
    net: Any = model.model  # its layers, read by attribute (nn.Module's types do not say what they hold)
    b = _Builder(_shared_initializers(main_path))
    b.const("two", np.array(2.0, np.float32))
    # The rotary tables [positions, head_dim / 2], computed in the graph (onnxruntime folds them at load).
    positions = b.op("Range", [b.const("zero", np.array(0.0, np.float32)),
                               b.const("positions", np.array(float(c.max_position_embeddings), np.float32)),
                               b.const("one", np.array(1.0, np.float32))])[0]
    column = b.op("Unsqueeze", [positions, b.const("axis_last", np.array([1], np.int64))])[0]
    whole: Any = model
    inv_freq = np.asarray(whole.inv_freq.detach().numpy(), np.float32)[None]
    freqs = b.op("Mul", [column, b.const("inv_freq", inv_freq)])[0]
    half = b.op("Concat", [freqs, freqs], axis=-1)[0]
    # [batch, sequence, 1, head_dim]: broadcast over the heads of [batch, sequence, heads, head_dim].
    unsq2 = b.const("axis2", np.array([2], np.int64))
    cos = b.op("Unsqueeze", [b.op("Gather", [b.op("Cos", [half])[0], "position_ids"], axis=0)[0], unsq2])[0]
    sin = b.op("Unsqueeze", [b.op("Gather", [b.op("Sin", [half])[0], "position_ids"], axis=0)[0], unsq2])[0]
    # The bias [batch, 1, 1, sequence, cache_length + sequence] for scores [batch, kv, rep, sequence, keys].
    bias = b.op("Unsqueeze", ["attention_bias", b.const("axes12", np.array([1, 2], np.int64))])[0]

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_bias", TensorProto.FLOAT,
                                      ["batch_size", "sequence_length", "cache_length + sequence_length"]),
        helper.make_tensor_value_info("logits_rows", TensorProto.INT64, ["batch_size"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 1, c.vocab_size])]
    x = b.op("Gather", [b.weight("model.embed_tokens.weight", net.embed_tokens.weight.detach().numpy()),
                        "input_ids"], axis=0)[0]
    split_half = b.const("split_half", np.array([d // 2, d // 2], np.int64))
    bshd = {n: b.const(f"shape_{n}", np.array([0, 0, n, d], np.int64)) for n in {heads, kv}}
    q_groups = b.const("q_groups", np.array([0, kv, -1, d], np.int64))

    def rotary(t: str, n: int) -> str:
        """HF's rotate_half rotary embedding of ``t [batch, sequence, n * d]`` -> ``[batch, sequence, n, d]``."""
        t4 = b.op("Reshape", [t, bshd[n]])[0]
        lo, hi = b.op("Split", [t4, split_half], outputs=2, axis=-1)
        turned = b.op("Concat", [b.op("Neg", [hi])[0], lo], axis=-1)[0]
        return b.op("Add", [b.op("Mul", [t4, cos])[0], b.op("Mul", [turned, sin])[0]])[0]

    for i, layer in enumerate(net.layers):
        p = f"model.layers.{i}"
        att = layer.self_attn
        h = b.rms_norm(x, b.weight(f"{p}.input_layernorm.weight", layer.input_layernorm.weight.detach().numpy()),
                       c.rms_norm_eps)
        q = b.linear(h, att.q_proj, f"{p}.self_attn.q_proj")
        k = b.linear(h, att.k_proj, f"{p}.self_attn.k_proj")
        v = b.linear(h, att.v_proj, f"{p}.self_attn.v_proj")
        if att.qk_norm:
            q = _head_norm(b, q, heads, d, att.q_norm, f"{p}.self_attn.q_norm", c.rms_norm_eps)
            k = _head_norm(b, k, kv, d, att.k_norm, f"{p}.self_attn.k_norm", c.rms_norm_eps)
        # [batch, heads, sequence, d]; queries grouped by key-value head: [batch, kv, rep * sequence, d].
        q = b.op("Transpose", [rotary(q, heads)], perm=[0, 2, 1, 3])[0]
        qg = b.op("Reshape", [q, q_groups])[0]
        k_new = b.op("Transpose", [rotary(k, kv)], perm=[0, 2, 1, 3])[0]
        v_new = b.op("Transpose", [b.op("Reshape", [v, bshd[kv]])[0]], perm=[0, 2, 1, 3])[0]
        past_k, past_v = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
        for name in (past_k, past_v):
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch_size", kv, "cache_length", d]))
        new_k, new_v = f"new.{i}.key", f"new.{i}.value"
        b.nodes.append(helper.make_node("Identity", [k_new], [new_k], name=b.name("new_key")))
        b.nodes.append(helper.make_node("Identity", [v_new], [new_v], name=b.name("new_value")))
        for name in (new_k, new_v):
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch_size", kv, "sequence_length", d]))
        # Scores over the cache read in place (its rows past each row's length are hidden by the bias) and
        # over the new tokens; one softmax over both.
        scale = float(att.scale)
        past_scores = b.op("FusedMatMul", [qg, past_k], domain=MS_DOMAIN, transB=1, alpha=scale)[0]
        new_scores = b.op("FusedMatMul", [qg, k_new], domain=MS_DOMAIN, transB=1, alpha=scale)[0]
        scores = b.op("Concat", [past_scores, new_scores], axis=-1)[0]
        shape5 = b.op("Concat", [b.op("Shape", [scores], end=2)[0], b.const(b.name("rep"), np.array([rep], np.int64)),
                                 b.op("Shape", [q], start=2, end=3)[0], b.op("Shape", [scores], start=3)[0]], axis=0)[0]
        probs = b.op("Softmax", [b.op("Add", [b.op("Reshape", [scores, shape5])[0], bias])[0]], axis=-1)[0]
        probs = b.op("Reshape", [probs, b.op("Shape", [scores])[0]])[0]
        cache_len = b.op("Shape", [past_k], start=2, end=3)[0]
        p_past = b.op("Slice", [probs, b.const(b.name("zero1"), np.array([0], np.int64)), cache_len,
                                b.const(b.name("last"), np.array([-1], np.int64))])[0]
        p_new = b.op("Slice", [probs, cache_len, b.const(b.name("end"), np.array([2 ** 62], np.int64)),
                               b.const(b.name("last"), np.array([-1], np.int64))])[0]
        out = b.op("Add", [b.op("MatMul", [p_past, past_v])[0], b.op("MatMul", [p_new, v_new])[0]])[0]
        # [batch, kv, rep * sequence, d] -> [batch, heads, sequence, d] -> [batch, sequence, heads * d]
        out = b.op("Reshape", [out, b.op("Shape", [q])[0]])[0]
        out = b.op("Reshape", [b.op("Transpose", [out], perm=[0, 2, 1, 3])[0],
                               b.const(b.name("flat_heads"), np.array([0, 0, heads * d], np.int64))])[0]
        x = b.op("Add", [x, b.linear(out, att.o_proj, f"{p}.self_attn.o_proj")])[0]
        h = b.rms_norm(x, b.weight(f"{p}.post_attention_layernorm.weight",
                                   layer.post_attention_layernorm.weight.detach().numpy()), c.rms_norm_eps)
        gate = b.linear(h, layer.mlp.gate_proj, f"{p}.mlp.gate_proj")
        up = b.linear(h, layer.mlp.up_proj, f"{p}.mlp.up_proj")
        silu = b.op("Mul", [gate, b.op("Sigmoid", [gate])[0]])[0]
        x = b.op("Add", [x, b.linear(b.op("Mul", [silu, up])[0], layer.mlp.down_proj, f"{p}.mlp.down_proj")])[0]
    x = b.rms_norm(x, b.weight("model.norm.weight", net.norm.weight.detach().numpy()), c.rms_norm_eps)
    # One position a row: flatten [batch, sequence, hidden] to rows and gather the ones asked for.
    flat = b.op("Reshape", [x, b.const("flat_shape", np.array([-1, c.hidden_size], np.int64))])[0]
    picked = b.op("Gather", [flat, "logits_rows"], axis=0)[0]
    logits = b.linear(b.op("Unsqueeze", [picked, b.const("axis1", np.array([1], np.int64))])[0], model.lm_head,
                      "lm_head")
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits"))
    graph = helper.make_graph(b.nodes, "rehearsal-slots", inputs, outputs, b.inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS_DOMAIN, 1)],
                              producer_name="rehearsal-studio-trainer")
    proto.ir_version = 8
    onnx.save(proto, out_path)
    return os.path.getsize(out_path)


def _head_norm(b: _Builder, x: str, heads: int, d: int, norm: Any, prefix: str, eps: float) -> str:
    """Qwen3's RMSNorm over each head of ``x [batch, sequence, heads * d]``."""
    shape = b.op("Shape", [x])[0]
    per_head = b.op("Reshape", [x, b.const(b.name("heads_shape"), np.array([0, 0, heads, d], np.int64))])[0]
    normed = b.rms_norm(per_head, b.weight(f"{prefix}.weight", norm.weight.detach().numpy()), eps)
    return b.op("Reshape", [normed, shape])[0]


def export_slots(folder: str) -> int:
    """Adds ``onnx/model_slots.onnx`` to a policy folder exported without it; returns its size in bytes."""
    from ..model.folder import load_model
    main = os.path.join(folder, "onnx", "model.onnx")
    if not os.path.isfile(main):
        raise TrainerError("MODEL_MISSING", f"{folder} has no onnx/model.onnx; export the model first "
                           "(`python3 -m trainer export`).", EXIT_RUNTIME)
    return build_slots_graph(load_model(folder), main, os.path.join(folder, "onnx", SLOTS_FILE))
