"""The in-process model: llama.cpp through llama-cpp-python, loaded once per process.

Every generation is bounded by a token count and a wall-clock time, and can be cancelled
from another thread (the provider's worker runs it; Ctrl-C sets the cancel flag, and
generation stops at the next token). llama_cpp is imported here only, and only when a
model is loaded: `agentcli --help` never pays for it.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentcli.errors import ProviderError
from agentcli.providers.local.prompts import Turn
from agentcli.records import dataclass

# Prompt formats for models whose GGUF has no chat template (base models).
GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{% set sys = '' %}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% set sys = m['content'] + '\n\n' %}"
    "{% else %}"
    "{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else 'user') + '\n' }}"
    "{% if loop.index0 == 1 and messages[0]['role'] == 'system' %}"
    "{{ messages[0]['content'] + '\n\n' }}{% endif %}"
    "{{ m['content'] | trim }}<end_of_turn>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
FALLBACK_TEMPLATES = {"gemma3": GEMMA_TEMPLATE, "gemma2": GEMMA_TEMPLATE, "gemma": GEMMA_TEMPLATE}
TURN_END_MARKERS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>")


@dataclass(slots=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # stop | length (token bound) | time (wall-clock bound) | cancelled
    seconds: float


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_log_callback = None  # kept alive: llama.cpp holds a pointer to it


def _silence_llama_logs() -> None:
    """llama.cpp prints its loading chatter on stderr; agentcli's stderr is for the user."""
    global _log_callback
    if _log_callback is not None:
        return
    import ctypes

    import llama_cpp

    @llama_cpp.llama_log_callback
    def quiet(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        return None

    _log_callback = quiet
    llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))


# What the engine uses beyond llama-cpp-python's public API: `Engine.score` moves the
# position of the evaluated prompt (`Llama.n_tokens`, read against `Llama.input_ids`) to
# reuse a shared prefix, and reads the last logits with the low-level binding; token
# texts and the BOS rule come from `Llama._model`. pyproject.toml pins the version this
# was tested with; a version without these fails at load with one clear line, not with an
# AttributeError mid-answer.
PRIVATE_STATE = ("n_tokens", "input_ids", "_model", "ctx", "eval")
LOW_LEVEL = ("llama_get_logits_ith",)
TESTED_VERSIONS = "0.3.36"


def check_runtime(llama_cpp: Any, llm: Any) -> None:
    """Raises ProviderError, naming what is missing, when this llama-cpp-python lacks
    the private state (or the low-level function) the engine uses."""
    missing = [f"Llama.{name}" for name in PRIVATE_STATE if not hasattr(llm, name)]
    missing += [name for name in LOW_LEVEL if not hasattr(llama_cpp, name)]
    if missing:
        version = getattr(llama_cpp, "__version__", "?")
        raise ProviderError(
            f"local: llama-cpp-python {version} lacks {', '.join(missing)}, which agentcli "
            f"uses (tested with {TESTED_VERSIONS}): pip install 'agentcli[local]'"
        )


class Engine:
    """One loaded model. Generations are serialized (one llama context), and consecutive
    prompts that share a prefix reuse its evaluated state (llama-cpp-python keeps it)."""

    def __init__(self, path: Path, *, n_ctx: int, n_threads: int) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.lock = threading.Lock()
        self._grammars: dict[str, Any] = {}
        self._formatter: Any = None
        self.load_seconds = 0.0
        self.template_source = "none"
        started = time.monotonic()
        try:
            import llama_cpp
        except ImportError as exc:  # installed but broken (a build for another CPU, say)
            raise ProviderError(f"local: cannot import llama_cpp: {exc}") from None
        _silence_llama_logs()
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                n_batch=512,
                verbose=False,
            )
        except Exception as exc:  # llama_cpp raises ValueError for a bad file
            raise ProviderError(f"local: could not load the model {path}: {exc}") from None
        check_runtime(llama_cpp, self.llm)
        self.load_seconds = time.monotonic() - started
        self.architecture = str(self.llm.metadata.get("general.architecture", ""))
        self.chat_template = self._pick_template()

    # --- prompt formatting ---------------------------------------------------------------

    def _pick_template(self) -> str:
        template = self.llm.metadata.get("tokenizer.chat_template")
        if template:
            self.template_source = "gguf"
            return template
        if self.architecture in FALLBACK_TEMPLATES:
            self.template_source = f"builtin:{self.architecture}"
            return FALLBACK_TEMPLATES[self.architecture]
        self.template_source = "builtin:chatml"
        return CHATML_TEMPLATE

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm._model.token_get_text(token)

    def format_chat(self, turns: Sequence[Turn], *, prefix: str = "") -> str:
        """The conversation in the model's own chat template, ending with the start of the
        assistant's turn (and `prefix`, text the answer is made to begin with)."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(
                template=self.chat_template,
                eos_token=self._token_text(self.llm.token_eos()),
                bos_token=self._token_text(self.llm.token_bos()),
            )
        messages = [{"role": turn.role, "content": turn.content} for turn in turns]
        try:
            prompt = self._formatter(messages=messages).prompt
        except Exception as exc:  # a template that refuses the conversation
            raise ProviderError(f"local: the model's chat template failed: {exc}") from None
        return prompt + prefix

    def stop_strings(self) -> list[str]:
        stops = [marker for marker in TURN_END_MARKERS if marker in self.chat_template]
        eos = self._token_text(self.llm.token_eos())
        if eos and eos not in stops:
            stops.append(eos)
        return stops

    def tokenize(self, text: str) -> list[int]:
        tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        bos = self.llm.token_bos()
        if self.llm._model.add_bos_token() and bos >= 0 and (not tokens or tokens[0] != bos):
            tokens = [bos, *tokens]
        return tokens

    def grammar(self, gbnf_or_schema: str, *, schema: bool) -> Any:
        grammar = self._grammars.get(gbnf_or_schema)
        if grammar is None:
            from llama_cpp import LlamaGrammar

            if schema:
                grammar = LlamaGrammar.from_json_schema(gbnf_or_schema, verbose=False)
            else:
                grammar = LlamaGrammar.from_string(gbnf_or_schema, verbose=False)
            self._grammars[gbnf_or_schema] = grammar
        return grammar

    # --- scoring ------------------------------------------------------------------------

    def score(
        self,
        prompt: list[int],
        continuations: Sequence[str],
        cancel: threading.Event | None = None,
    ) -> list[float]:
        """Log-probability of each continuation after `prompt` (summed over its tokens):
        how a choice among a few names is made without letting the model write them.
        Blocking; the prompt's evaluation is shared by all continuations."""
        import llama_cpp
        import numpy as np

        if len(prompt) + max(len(c) for c in continuations) + 2 > self.n_ctx:
            raise ProviderError(f"local: the prompt does not fit the context ({self.n_ctx})")
        n_vocab = self.llm.n_vocab()

        def last_logprobs() -> Any:
            pointer = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
            logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,)).astype(np.float64)
            top = logits.max()
            return logits - top - np.log(np.exp(logits - top).sum())

        scores = []
        with self.lock:
            common = 0
            ids = self.llm.input_ids[: self.llm.n_tokens]
            while common < min(len(ids), len(prompt)) and ids[common] == prompt[common]:
                common += 1
            if common == len(prompt):  # logits of the last prompt token are gone: redo it
                common -= 1
            self.llm.n_tokens = common
            self.llm.eval(prompt[common:])
            base = self.llm.n_tokens
            first = last_logprobs()
            for text in continuations:
                if cancel is not None and cancel.is_set():
                    raise ProviderError("local: cancelled")
                tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
                self.llm.n_tokens = base
                total = float(first[tokens[0]])
                for previous, token in itertools.pairwise(tokens):
                    self.llm.eval([previous])
                    total += float(last_logprobs()[token])
                scores.append(total)
            self.llm.n_tokens = base
        return scores

    # --- generation ---------------------------------------------------------------------

    def generate(
        self,
        prompt: str | list[int],
        *,
        max_tokens: int,
        max_seconds: float,
        grammar: Any = None,
        stop: Sequence[str] = (),
        on_text: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        temperature: float = 0.0,
        repeat_penalty: float = 1.0,
    ) -> Generation:
        """Blocking: call it from a worker thread. Never more than `max_tokens` tokens nor
        (past the prompt's evaluation) `max_seconds` seconds."""
        from llama_cpp import StoppingCriteriaList

        tokens = self.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
        room = self.n_ctx - len(tokens)
        if room < 8:
            raise ProviderError(
                f"local: the prompt ({len(tokens)} tokens) does not fit the context "
                f"({self.n_ctx} tokens)"
            )
        max_tokens = max(1, min(max_tokens, room - 1))
        started = time.monotonic()
        state = {"reason": None}
        count = 0

        def bounded(input_ids: Any, logits: Any) -> bool:
            if cancel is not None and cancel.is_set():
                state["reason"] = "cancelled"
                return True
            if time.monotonic() - started > max_seconds:
                state["reason"] = "time"
                return True
            return False

        parts: list[str] = []
        finish = "stop"
        with self.lock:
            stream = self.llm.create_completion(
                tokens,
                max_tokens=max_tokens,
                temperature=temperature,
                top_k=1 if temperature == 0 else 40,
                repeat_penalty=repeat_penalty,
                stop=list(stop),
                stream=True,
                grammar=grammar,
                stopping_criteria=StoppingCriteriaList([bounded]),
                seed=0,
            )
            for chunk in stream:
                choice = chunk["choices"][0]
                text = choice.get("text") or ""
                if text:
                    count += 1
                    parts.append(text)
                    if on_text is not None:
                        on_text(text)
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
            completion_tokens = max(0, self.llm.n_tokens - len(tokens))
        if state["reason"] is not None:
            finish = state["reason"]
        return Generation(
            text="".join(parts),
            prompt_tokens=len(tokens),
            completion_tokens=completion_tokens or count,
            finish_reason=finish,
            seconds=time.monotonic() - started,
        )


_engines: dict[tuple[str, int, int], Engine] = {}
_engines_lock = threading.Lock()


def get_engine(
    path: Path,
    *,
    n_ctx: int,
    n_threads: int,
    label: str,
    progress: Callable[[str], None] | None = None,
) -> Engine:
    """The process's engine for this file and context size: loaded on first use only."""
    key = (str(path), n_ctx, n_threads)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is not None:
            return engine
        size_mb = path.stat().st_size / 1e6 if path.exists() else 0
        if progress is not None:
            progress(f"loading the local model {label} ({size_mb:.0f} MB)")
        engine = Engine(path, n_ctx=n_ctx, n_threads=n_threads)
        _engines[key] = engine
        return engine


def stderr_progress(text: str) -> None:
    """The loading line, on stderr (stdout stays the answer's)."""
    try:
        sys.stderr.write(f"agentcli: {text}...\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
