"""The trainer's configuration as frozen dataclasses, one per section of
``schemas/trainer-config.schema.json``, built once from the dict :func:`trainer.config.load_config`
validated and filled with defaults. Lists become tuples; :meth:`TrainerConfig.to_dict` (and each
section's ``to_dict``) gives back the same JSON the dict held, for fingerprints saved in checkpoints."""
import dataclasses
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def _build(cls: type[T], data: dict[str, Any]) -> T:
    """``cls`` from a validated dict: nested sections built recursively, lists as tuples."""
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        key = f.metadata.get("key", f.name)
        if key not in data:
            continue  # only optional metadata ($schema); every other field has a schema default
        value = data[key]
        kind = hints[f.name]
        if isinstance(kind, type) and dataclasses.is_dataclass(kind) and isinstance(value, dict):
            value = _build(kind, value)
        elif isinstance(value, list):
            value = tuple(value)
        elif isinstance(value, dict):
            value = dict(value)
        values[f.name] = value
    return cls(**values)


def json_value(value: Any) -> Any:
    """A config value as JSON data: sections as dicts, tuples as lists."""
    if isinstance(value, _Section):  # every dataclass in a config is a section
        return value.to_dict()
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


class _Section:
    """``to_dict``: the section as the JSON object it was read from."""

    def to_dict(self) -> dict[str, Any]:
        out = {}
        # Each subclass is a dataclass; the mixin itself is not, so mypy needs telling.
        for f in dataclasses.fields(cast("DataclassInstance", self)):
            value = getattr(self, f.name)
            if f.metadata.get("omit_none") and value is None:
                continue
            out[f.metadata.get("key", f.name)] = json_value(value)
        return out


@dataclass(frozen=True)
class ArchitectureConfig(_Section):
    """``model.architecture``: the Llama decoder shape of ``init``."""
    hidden_size: int = 128
    intermediate_size: int = 344
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int | None = None
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 4096
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    model_type: str = "llama"
    initializer_range: float = 0.02
    vocab_size: int | None = None


@dataclass(frozen=True)
class ModelSection(_Section):
    """``model``: where a command starts from."""
    path: str | None = None
    tokenizer: str | None = None
    architecture: ArchitectureConfig = ArchitectureConfig()
    backend: str = "auto"


@dataclass(frozen=True)
class LoraSection(_Section):
    """``lora``: low-rank adapters through PEFT (rank 0: every weight trains)."""
    rank: int = 0
    alpha: float | None = None
    dropout: float = 0.0
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    merge_at_end: bool = True


@dataclass(frozen=True)
class TokenizerSection(_Section):
    """``tokenizer``: the corpus and shape of a trained tokenizer."""
    text_files: tuple[str, ...] = ()
    row_files: tuple[str, ...] = ()
    vocab_size: int = 1024
    min_frequency: int = 2
    added_tokens: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                                     "<tool_response>", "</tool_response>", "<execution_result>",
                                     "</execution_result>", "<think>", "</think>")
    model_max_length: int = 4096
    digit_group: int = 1
    chat_template: str = "full"


@dataclass(frozen=True)
class DataSection(_Section):
    """``data``: the rows sft and render read."""
    train: tuple[str, ...] = ()
    max_length: int = 2048
    roles: tuple[str, ...] = ("act", "rehearse")


@dataclass(frozen=True)
class OptimSection(_Section):
    """``optim``: AdamW and the learning-rate schedule."""
    lr: float = 0.001
    schedule: str = "cosine"
    warmup_steps: int = 0
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.0
    betas: tuple[float, ...] = (0.9, 0.95)
    eps: float = 1e-8
    grad_clip: float | None = 1.0


@dataclass(frozen=True)
class TrainSection(_Section):
    """``train``: steps, batches, checkpoints, precision."""
    steps: int = 100
    batch_size: int = 16
    micro_batch_size: int = 4
    log_every: int = 1
    checkpoint_every: int = 50
    keep_checkpoints: int = 2
    resume: bool = True
    precision: str = "fp32"
    attention: str = "auto"
    max_seconds: float | None = None
    export_at_end: bool = True
    gradient_checkpointing: bool = False
    packing: bool = True
    pack_tokens: int | None = None


@dataclass(frozen=True)
class GroundingSection(_Section):
    """``grpo.grounding``: the grounding NLL term."""
    coef: float = 0.0
    rows: tuple[str, ...] = ()
    batch_size: int = 8


@dataclass(frozen=True)
class GrpoSection(_Section):
    """``grpo``: the role-wise GRPO objective."""
    iterations: int = 10
    mini_batch_size: int | None = None
    mini_batch_unit: str = "row"
    loss_agg: str = "token-mean"
    ppo_epochs: int = 1
    clip_ratio: float = 0.2
    clip_ratio_c: float | None = 3.0
    norm_adv_by_std: bool = False
    drop_zero_variance_groups: bool = False
    kl_coef: float = 0.0
    kl_type: str = "low_var_kl"
    temperature: float = 1.0
    tis_cap: float | None = 2.0
    grounding: GroundingSection = GroundingSection()


@dataclass(frozen=True)
class RolloutsSection(_Section):
    """``rollouts``: where each grpo iteration's rows come from."""
    command: tuple[str, ...] | None = None
    rows: str | None = None
    timeout_s: float = 86400
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    keep_models: bool = False
    server_url: str | None = None
    server_model: str | None = None
    server_api_key_env: str | None = None


@dataclass(frozen=True)
class TrlSection(_Section):
    """``trl``: what ``trl-grpo`` (TRL's GRPOTrainer) samples."""
    tasks: tuple[str, ...] = ()
    num_generations: int = 4
    tasks_per_step: int = 2


@dataclass(frozen=True)
class ValidationSection(_Section):
    """``validation``: grpo's held-out validation, and which policy it keeps."""
    command: tuple[str, ...] | None = None
    every: int = 1
    metric: str = "success"
    tie_metric: str | None = None
    before_training: bool = True
    keep_best: bool = True
    timeout_s: float = 86400


@dataclass(frozen=True)
class ExportSection(_Section):
    """``export``: the ONNX folder the policy host loads."""
    opset: int = 14
    external_data: str = "auto"
    max_new_tokens: int = 512
    cascade: bool = True
    slots: bool = True


@dataclass(frozen=True)
class ProbeSection(_Section):
    """``probe``: sft's copy probe on held-out act rows."""
    rows: tuple[str, ...] = ()
    every: int = 0
    max_rows: int = 64
    greedy_rows: int = 32
    max_new_tokens: int = 96


@dataclass(frozen=True)
class GenerateSection(_Section):
    """``generate``: greedy decoding of a prompts file."""
    prompts: str | None = None
    max_new_tokens: int = 32
    min_new_tokens: int = 0
    logits: bool = False


@dataclass(frozen=True)
class TrainerConfig(_Section):
    """The whole validated configuration, with defaults and absolute paths."""
    schema: str | None = dataclasses.field(default=None, metadata={"key": "$schema", "omit_none": True})
    seed: int = 0
    device: str = "auto"
    threads: int | None = None
    out_dir: str | None = None
    model: ModelSection = ModelSection()
    lora: LoraSection = LoraSection()
    tokenizer: TokenizerSection = TokenizerSection()
    data: DataSection = DataSection()
    optim: OptimSection = OptimSection()
    train: TrainSection = TrainSection()
    grpo: GrpoSection = GrpoSection()
    rollouts: RolloutsSection = RolloutsSection()
    trl: TrlSection = TrlSection()
    validation: ValidationSection = ValidationSection()
    export: ExportSection = ExportSection()
    probe: ProbeSection = ProbeSection()
    generate: GenerateSection = GenerateSection()
    config_dir: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainerConfig":
        """The typed config of a dict :func:`trainer.config.load_config` returned."""
        return _build(cls, data)
