"""A tiny local tokenizer with a chat template, for training paths that tokenize client-side.

verifiers v1 trains through its renderer client: the client renders the
conversation to token ids with the model's tokenizer and chat template, and asks a
vLLM `/inference/v1/generate` engine for completion ids and logprobs. No model
tokenizer can be downloaded here, so the scripted policy ships its own: one token
per UTF-8 byte (byte-level BPE without merges) plus the special tokens of a
Hermes-style chat template (`<|im_start|>`, `<|im_end|>`, `<tool_call>`,
`</tool_call>`), saved as an ordinary Hugging Face tokenizer directory that
`renderers.load_tokenizer(path)` loads. With `DefaultRendererConfig(tool_parser=
"qwen3")` the renderer parses the policy's `<tool_call>` blocks into tool calls.

Needs the `tokenizers` and `transformers` packages (the v1 stack has them).
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>"]

# Tool calls render as `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`; tool
# results come back as a user turn in `<tool_response>`. Every message renders on its own,
# so a conversation sent back unchanged re-renders to the same bytes (prefix stable).
CHAT_TEMPLATE = (
    "{%- if messages[0].role == 'system' or tools %}<|im_start|>system\n"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}{% endif %}"
    "{%- if tools %}\n\n# Tools\n<tools>{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n</tools>{% endif %}"
    "<|im_end|>\n{% endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>\n"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content or '' }}"
    "{%- for tc in m.tool_calls or [] %}<tool_call>\n"
    '{"name": {{ tc.function.name | tojson }}, "arguments": '
    "{{ tc.function.arguments if tc.function.arguments is string else tc.function.arguments | tojson }}}"
    "\n</tool_call>{% endfor %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map of the 256 byte values to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs), strict=True))


def build_tokenizer(directory: Path) -> Path:
    """Write the tokenizer to `directory` (idempotent); returns the directory."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    directory = Path(directory)
    if (directory / "tokenizer.json").is_file():
        return directory
    vocab = {ch: i for i, ch in enumerate(_bytes_to_unicode()[b] for b in range(256))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIAL)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    directory.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(directory))
    (directory / "websandbox-tokenizer.json").write_text(json.dumps({"kind": "byte-level", "special": SPECIAL}))
    return directory
