"""Byte-level BPE tokenizer (Hugging Face tokenizers): training on a corpus, the ``tokenizer.json`` it
writes, and an encoder/decoder whose ids equal transformers.js' ids for the same file."""
from .bytelevel import DEFAULT_ADDED_TOKENS, SPLIT_PATTERN
from .tokenizer import Tokenizer, load_tokenizer
from .train import train_bpe

__all__ = ["DEFAULT_ADDED_TOKENS", "SPLIT_PATTERN", "Tokenizer", "load_tokenizer", "train_bpe"]
