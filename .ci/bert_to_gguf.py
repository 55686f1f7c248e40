"""Converts a sentence-transformers BERT checkpoint (config.json, model.safetensors,
tokenizer.json, 1_Pooling/config.json) to a GGUF file that llama.cpp serves as an embedding
model (`/v1/embeddings`). Needs numpy, safetensors and gguf only (no torch, no transformers).

usage: bert_to_gguf.py MODEL_DIR OUT.gguf
"""
import json
import sys
from pathlib import Path

import gguf
import numpy as np
from safetensors.numpy import load_file


def main(src: Path, out: Path) -> None:
    cfg = json.loads((src / "config.json").read_text())
    tok = json.loads((src / "tokenizer.json").read_text())
    pooling_cfg = src / "1_Pooling" / "config.json"
    pooling = gguf.PoolingType.MEAN
    if pooling_cfg.exists() and json.loads(pooling_cfg.read_text()).get("pooling_mode_cls_token"):
        pooling = gguf.PoolingType.CLS
    n_layers = cfg["num_hidden_layers"]

    w = gguf.GGUFWriter(str(out), "bert")
    w.add_name(src.name)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(n_layers)
    w.add_head_count(cfg["num_attention_heads"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_pooling_type(pooling)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    # WordPiece vocabulary in llama.cpp's "phantom space" form: a word start gets U+2581,
    # a continuation loses its "##"; special tokens stay as they are.
    vocab = tok["model"]["vocab"]
    tokens = [None] * len(vocab)
    for text, idx in vocab.items():
        tokens[idx] = text
    special = {t["content"]: t["id"] for t in tok.get("added_tokens", []) if t.get("special")}
    names, types = [], []
    for idx, text in enumerate(tokens):
        if text in special:
            names.append(text)
            types.append(gguf.TokenType.CONTROL)
        elif text.startswith("##"):
            names.append(text[2:])
            types.append(gguf.TokenType.NORMAL)
        else:
            names.append("\u2581" + text)
            types.append(gguf.TokenType.NORMAL)
    w.add_vocab_size(len(names))
    w.add_token_type_count(cfg.get("type_vocab_size", 2))
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(names)
    w.add_token_types(types)
    ids = {name: special.get(name) for name in ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]")}
    w.add_bos_token_id(ids["[CLS]"])
    w.add_eos_token_id(ids["[SEP]"])
    w.add_sep_token_id(ids["[SEP]"])
    w.add_unk_token_id(ids["[UNK]"])
    w.add_pad_token_id(ids["[PAD]"])
    w.add_mask_token_id(ids["[MASK]"])
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)

    names_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layers)
    for name, data in load_file(str(src / "model.safetensors")).items():
        name = name.removeprefix("bert.")
        if name in ("embeddings.position_ids",) or name.startswith("pooler."):
            continue
        new = names_map.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise SystemExit(f"no GGUF name for tensor {name}")
        data = data.astype(np.float32)
        # The layers' matrices in f16 (half the size); embedding tables (added to f32
        # activations, which llama.cpp's CPU backend does only in f32), vectors and norms in f32.
        if data.ndim == 2 and new.startswith("blk."):
            data = data.astype(np.float16)
        w.add_tensor(new, data)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
