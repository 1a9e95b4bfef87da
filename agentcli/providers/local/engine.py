"""The in-process model: llama.cpp's own server, through xllamacpp, loaded once per process.

xllamacpp ships llama.cpp prebuilt (abi3 wheels for Linux, macOS and Windows: nothing
compiles on install) and exposes llama.cpp's server in-process: completions and chat
completions called as functions (`Server.handle_completions`), with grammars, log-
probabilities and the server's prompt cache. Only that public interface is used — the
calls, their JSON requests and answers — never the runtime's private state, so that any
build of it works. The server also listens (it cannot be told not to): on a Unix socket in
a directory of this process's own (mode 0700, removed at exit), so no TCP port is open at
all and no browser page can reach it, with a random API key that never leaves this process
(not in any argv or environment: a child that reaches the socket is answered 401), and
CORS allowing no origin (llama.cpp's default is every one). Where a Unix socket cannot be
made (Windows, a TMPDIR too long for a socket's name), it listens on 127.0.0.1 with the same
key. agentcli uses it only for what the in-process calls lack: tokenizing, the chat
template, and saving or restoring the evaluated prompt (`/tokenize`, `/apply-template`,
`/slots`, all documented endpoints of llama.cpp's server).

Every generation is bounded by a token count and a wall-clock time, and can be cancelled
from another thread (Ctrl-C sets the flag; the stream stops at the next token). xllamacpp
is imported here only, and only when a model is loaded: `agentcli --help` never pays for it.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentcli.errors import ProviderError
from agentcli.providers.local.prompts import Turn
from agentcli.records import dataclass

TURN_END_MARKERS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>")
# How many of the likeliest next tokens `next_logprobs` asks for; a token outside them is
# given the last one's log-probability (an upper bound).
TOP_TOKENS = 200


@dataclass(slots=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # stop | length (token bound) | time (wall-clock bound) | cancelled
    seconds: float
    cached_tokens: int = 0  # of the prompt, found evaluated already (the prompt cache)


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


SOCKET_NAME_MAX = 100  # sun_path holds 104 bytes on macOS, 108 on Linux


def private_socket() -> str | None:
    """A path for the server's Unix socket in a new directory only this user can enter
    (removed when the process ends), or None where there can be none."""
    if os.name == "nt":
        return None
    import atexit
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix="agentcli-model-")  # mode 0700
    path = os.path.join(directory, "llama.sock")  # llama.cpp binds a name ending in .sock
    if len(os.fsencode(path)) > SOCKET_NAME_MAX:
        os.rmdir(directory)
        return None
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return path


def token_grammar(tokens: Sequence[int]) -> str:
    """A grammar that allows exactly these tokens, in order: a continuation written the
    way the tokenizer writes it (a text grammar lets the sampler spell a word in odd
    pieces, whose probabilities say little)."""
    return "root ::= " + " ".join(f"<[{token}]>" for token in tokens)


class Engine:
    """One loaded model: llama.cpp's server with one slot. Requests are serialized (one
    context); consecutive prompts that share a prefix reuse its evaluated state."""

    def __init__(
        self, path: Path, *, n_ctx: int, n_threads: int, cache_dir: Path | None = None
    ) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.lock = threading.Lock()
        self.cache_dir = cache_dir
        self.template_source = "gguf"
        started = time.monotonic()
        try:
            import xllamacpp
        except ImportError as exc:  # installed but broken (a wheel for another machine)
            raise ProviderError(f"local: cannot import xllamacpp: {exc}") from None
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads
        params.verbosity = -1  # llama.cpp's chatter stays off agentcli's stderr
        params.warmup = False  # the first request warms it; a load should be quick
        params.ui = False
        params.endpoint_metrics = False
        self._key = secrets.token_urlsafe(24)
        params.api_keys = [self._key]
        self._socket = private_socket()
        params.hostnames = [self._socket or "127.0.0.1"]
        params.cors_origins = ""  # no page of any origin may read its answers
        params.cors_origins_explicit = True
        params.cors_credentials = False
        if cache_dir is not None:
            params.slot_save_path = str(cache_dir) + os.sep  # the server joins names on
        try:
            self.server = xllamacpp.Server(params)
        except Exception as exc:  # RuntimeError: "Failed to init server"
            raise ProviderError(f"local: could not load the model {path}: {exc}") from None
        self._http: Any = None
        # One token through the server's task loop before anything else: the constructor
        # returns before that loop has started, and a server dropped then (a run that
        # ends at once) waits forever for a loop that never saw its stop.
        self._complete({"prompt": "\n", "max_tokens": 1, "temperature": 0})
        self.load_seconds = time.monotonic() - started

    # --- the server's HTTP endpoints (loopback, keyed) -----------------------------------

    def _post(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._http is None:
            import httpx

            where = {"transport": httpx.HTTPTransport(uds=self._socket)} if self._socket else {}
            self._http = httpx.Client(
                base_url="http://localhost" if self._socket else self.server.listening_address,
                **where,
                headers={"Authorization": f"Bearer {self._key}"},
                timeout=60,
                trust_env=False,  # never a proxy: it is this process's own server
            )
        import httpx

        try:
            response = self._http.post(endpoint, json=body)
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderError(f"local: the model server's {endpoint} failed: {exc}") from None
        if not response.is_success or not isinstance(data, dict):
            raise ProviderError(f"local: the model server's {endpoint} failed: {_error(data)}")
        return data

    # --- prompt formatting ---------------------------------------------------------------

    def format_chat(self, turns: Sequence[Turn], *, prefix: str = "") -> str:
        """The conversation in the model's own chat template (llama.cpp's, from the GGUF),
        ending with the start of the assistant's turn and `prefix`, text the answer is
        made to begin with."""
        messages = [{"role": turn.role, "content": turn.content} for turn in turns]
        prompt = self._post("/apply-template", {"messages": messages}).get("prompt")
        if not isinstance(prompt, str):
            raise ProviderError("local: the model's chat template gave no prompt")
        return prompt + prefix

    def stop_strings(self) -> list[str]:
        return list(TURN_END_MARKERS)

    def tokenize(self, text: str) -> list[int]:
        """The prompt's tokens as the server itself makes them (BOS added where the model
        wants one, special tokens such as <|im_start|> recognised)."""
        return self._tokens(text, special=True)

    def _tokens(self, text: str, *, special: bool) -> list[int]:
        data = self._post(
            "/tokenize", {"content": text, "add_special": special, "parse_special": special}
        )
        tokens = data.get("tokens")
        if not isinstance(tokens, list):
            raise ProviderError("local: the model server's /tokenize gave no tokens")
        return [t["id"] if isinstance(t, dict) else int(t) for t in tokens]

    def grammar(self, gbnf_or_schema: str, *, schema: bool) -> str:
        """A grammar for a request: GBNF as it is, or a JSON Schema converted by llama.cpp's
        own converter (which keeps minimums, enums and required properties)."""
        if not schema:
            return gbnf_or_schema
        import xllamacpp

        return xllamacpp.json_schema_to_grammar(gbnf_or_schema)

    # --- the prompt cache, kept on disk between runs -------------------------------------

    def restore(self, name: str) -> int:
        """Loads a saved evaluated prompt into the slot; 0 when there is none (or it is
        unreadable: then the prompt is evaluated as usual). Returns the tokens restored."""
        if self.cache_dir is None or not (self.cache_dir / name).is_file():
            return 0
        try:
            with self.lock:
                data = self._post("/slots/0?action=restore", {"filename": name})
        except ProviderError:
            return 0
        return int(data.get("n_restored") or 0)

    def save(self, name: str) -> None:
        """Saves the slot's evaluated prompt as `name`, atomically (a file of its own,
        renamed into place: two runs saving at once cannot leave half a file)."""
        if self.cache_dir is None:
            return
        temporary = f".{name}.{os.getpid()}.part"
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            with self.lock:
                self._post("/slots/0?action=save", {"filename": temporary})
            os.replace(self.cache_dir / temporary, self.cache_dir / name)
        except (OSError, ProviderError):
            (self.cache_dir / temporary).unlink(missing_ok=True)

    def prime(self, text: str, cancel: threading.Event | None = None) -> None:
        """Puts the evaluated `text` (a prompt's fixed beginning: the system prompt and
        its tool list) into the slot, from the file a run before saved when there is one,
        else by evaluating it and saving it for the runs after. The prompts that begin
        with it then evaluate only the rest."""
        tokens = self.tokenize(text)
        name = f"prompt-{self._identity(text)}.bin"
        if self.restore(name) >= len(tokens):
            return
        if cancel is not None and cancel.is_set():
            raise ProviderError("local: cancelled")
        self.next_logprobs(tokens)
        self.save(name)

    def _identity(self, text: str) -> str:
        """What a saved prompt depends on: the model file, the context, the runtime."""
        import hashlib

        from agentcli.providers.local.models import runtime_version

        try:
            stat = self.path.stat()
            model = f"{self.path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        except OSError:
            model = str(self.path)
        key = f"{model}\n{self.n_ctx}\n{runtime_version()}\n{text}"
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    # --- scoring ------------------------------------------------------------------------

    def next_logprobs(self, prompt: list[int]) -> dict[int, float]:
        """Log-probabilities of the likeliest TOP_TOKENS tokens after `prompt` (the model's
        own, before any sampling or grammar), and -1 for the floor: what a token outside
        them is given."""
        data = self._complete(
            {"prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": TOP_TOKENS}
        )
        [first] = _logprob_entries(data)[:1] or [None]
        if first is None:
            raise ProviderError("local: the model server gave no log-probabilities")
        top = {entry["id"]: float(entry["logprob"]) for entry in first["top_logprobs"]}
        top[-1] = min(top.values()) if top else -30.0
        return top

    def score_first_tokens(
        self,
        prompt: list[int],
        continuations: Sequence[str],
        cancel: threading.Event | None = None,
    ) -> list[float]:
        """Log-probability of each continuation after `prompt`, read off the next-token
        distributions down to where the continuations part: a continuation alone in its
        first token scores that token's log-probability (what follows is taken as
        certain), those that share it are told apart by the next, and so on. A few
        requests for all of them, instead of one per continuation (`score`)."""
        sequences = [self.continuation_tokens(text) for text in continuations]
        scores = [0.0] * len(sequences)

        def walk(prefix: list[int], members: list[int], depth: int) -> None:
            if cancel is not None and cancel.is_set():
                raise ProviderError("local: cancelled")
            if len(prompt) + len(prefix) + 2 > self.n_ctx:
                raise ProviderError(f"local: the prompt does not fit the context ({self.n_ctx})")
            distribution = self.next_logprobs(prompt + prefix)
            groups: dict[int, list[int]] = {}
            for member in members:
                groups.setdefault(sequences[member][depth], []).append(member)
            for token, group in groups.items():
                for member in group:
                    scores[member] += distribution.get(token, distribution[-1])
                deeper = [m for m in group if len(sequences[m]) > depth + 1]
                if len(group) > 1 and deeper:
                    walk([*prefix, token], deeper, depth + 1)

        walk([], [i for i, seq in enumerate(sequences) if seq], 0)
        return scores

    def continuation_tokens(self, text: str) -> list[int]:
        """A continuation's tokens (no BOS, special tokens as text)."""
        return self._tokens(text, special=False)

    def score(
        self,
        prompt: list[int],
        continuations: Sequence[str],
        cancel: threading.Event | None = None,
    ) -> list[float]:
        """Log-probability of each continuation after `prompt` (summed over its tokens):
        the continuation is forced token by token (`token_grammar`) and the model's own
        log-probability of each token read back. Blocking; the prompt is evaluated once
        (the prompt cache keeps it for the others)."""
        scores = []
        for text in continuations:
            if cancel is not None and cancel.is_set():
                raise ProviderError("local: cancelled")
            tokens = self.continuation_tokens(text)
            if len(prompt) + len(tokens) + 2 > self.n_ctx:
                raise ProviderError(f"local: the prompt does not fit the context ({self.n_ctx})")
            data = self._complete(
                {
                    "prompt": prompt,
                    "max_tokens": len(tokens),
                    "temperature": 0,
                    "grammar": token_grammar(tokens),
                    "logprobs": 1,
                }
            )
            scores.append(sum(float(entry["logprob"]) for entry in _logprob_entries(data)))
        return scores

    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            data = self.server.handle_completions({**body, "cache_prompt": True, "seed": 0})
        if not isinstance(data, dict) or "error" in data or "choices" not in data:
            raise ProviderError(f"local: {_error(data)}")
        return data

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
        seed: int = 0,
    ) -> Generation:
        """Blocking: call it from a worker thread. Never more than `max_tokens` tokens nor
        (past the prompt's evaluation) `max_seconds` seconds."""
        body: dict[str, Any] = {
            "prompt": prompt,
            "max_tokens": max(1, max_tokens),
            "temperature": temperature,
            "top_k": 1 if temperature == 0 else 40,
            "repeat_penalty": repeat_penalty,
            "stop": list(stop),
            "stream": True,
            "cache_prompt": True,
            "seed": seed,
        }
        if grammar:
            body["grammar"] = grammar
        started = time.monotonic()
        state: dict[str, Any] = {"reason": None, "error": None, "finish": "stop", "timings": {}}
        parts: list[str] = []

        def receive(chunk: dict[str, Any]) -> bool:
            """One streamed chunk; True stops the generation."""
            if "error" in chunk or "choices" not in chunk:
                state["error"] = _error(chunk)
                return True
            state["timings"] = chunk.get("timings") or state["timings"]
            for choice in chunk["choices"]:
                text = choice.get("text") or ""
                if text:
                    parts.append(text)
                    if on_text is not None:
                        on_text(text)
                if choice.get("finish_reason"):
                    state["finish"] = choice["finish_reason"]
            if cancel is not None and cancel.is_set():
                state["reason"] = "cancelled"
                return True
            if time.monotonic() - started > max_seconds:
                state["reason"] = "time"
                return True
            return False

        with self.lock:
            self.server.handle_completions(body, receive)
        if state["error"] is not None:
            raise ProviderError(f"local: {state['error']}")
        timings = state["timings"]
        return Generation(
            text="".join(parts),
            prompt_tokens=int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0)),
            completion_tokens=int(timings.get("predicted_n", len(parts))),
            finish_reason=state["reason"] or state["finish"],
            seconds=time.monotonic() - started,
            cached_tokens=int(timings.get("cache_n", 0)),
        )


def _logprob_entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    logprobs = data["choices"][0].get("logprobs") or {}
    return list(logprobs.get("content") or [])


def _error(data: Any) -> str:
    """The one line a server error says (its `message`), never the whole JSON."""
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return f"the model server answered {str(data)[:200]!r}"


_engines: dict[tuple[str, int, int], Engine] = {}
_engines_lock = threading.Lock()


def get_engine(
    path: Path,
    *,
    n_ctx: int,
    n_threads: int,
    label: str,
    progress: Callable[[str], None] | None = None,
    cache_dir: Path | None = None,
) -> Engine:
    """The process's engine for this file and context size: loaded on first use only, so
    that the REPL's later turns find it loaded."""
    key = (str(path), n_ctx, n_threads)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is not None:
            return engine
        size_mb = path.stat().st_size / 1e6 if path.exists() else 0
        if progress is not None:
            progress(f"loading the local model {label} ({size_mb:.0f} MB)")
        engine = Engine(path, n_ctx=n_ctx, n_threads=n_threads, cache_dir=cache_dir)
        _engines[key] = engine
        return engine


def stderr_progress(text: str) -> None:
    """The loading line, on stderr (stdout stays the answer's)."""
    try:
        sys.stderr.write(f"agentcli: {text}...\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
