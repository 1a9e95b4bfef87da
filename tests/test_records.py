"""agentcli.records: the same behaviour as the standard dataclasses for what agentcli uses,
checked side by side on the same class bodies, and no module of agentcli importing
`dataclasses` (which would bring back the cost records exist to avoid)."""

from __future__ import annotations

import ast
import copy
import dataclasses
import pickle
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli import records

PACKAGE = Path(__file__).resolve().parent.parent / "agentcli"


def both(options: dict[str, Any], make_body: Any) -> tuple[type, type]:
    """The class that `make_body(dataclass, field)` returns, made once with each library."""
    std = dataclasses.dataclass(**options)(make_body(dataclasses.field))
    ours = records.dataclass(**options)(make_body(records.field))
    return std, ours


def point_body(field: Any) -> type:
    class Point:
        KIND: ClassVar[str] = "point"
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list)
        note: str = field(default="", compare=False, repr=False)

        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

    return Point


OPTIONS = [
    {},
    {"frozen": True},
    {"slots": True},
    {"frozen": True, "slots": True},
    {"kw_only": True, "slots": True},
    {"eq": False},
]


def outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as error:  # the type is what must match
        return ("error", type(error).__name__)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    args=st.lists(st.integers(-5, 5), max_size=3),
    kwargs=st.dictionaries(
        st.sampled_from(["x", "y", "tags", "note", "other"]),
        st.one_of(st.integers(-3, 3), st.lists(st.sampled_from("ab"), max_size=2)),
        max_size=3,
    ),
)
def test_construction_repr_eq_and_hash_match_dataclasses(options, args, kwargs) -> None:
    std, ours = both(options, point_body)
    a = outcome(lambda: std(*args, **kwargs))
    b = outcome(lambda: ours(*args, **kwargs))
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1] == b[1]
        return
    made_std, made_ours = a[1], b[1]
    assert repr(made_ours).replace(ours.__qualname__, "X") == repr(made_std).replace(
        std.__qualname__, "X"
    )
    again = ours(*args, **kwargs)
    assert (made_ours == again) == (made_std == std(*args, **kwargs))
    assert outcome(lambda: made_ours == ours(99)) == outcome(lambda: made_std == std(99))
    assert outcome(lambda: hash(made_ours))[0] == outcome(lambda: hash(made_std))[0]
    if outcome(lambda: hash(made_ours))[0] == "ok" and options.get("frozen"):
        assert hash(made_ours) == hash(again)
    assert (type(made_ours).__hash__ is None) == (type(made_std).__hash__ is None)
    assert outcome(made_ours.norm) == outcome(made_std.norm)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_fields_replace_and_class_attributes_match(options) -> None:
    std, ours = both(options, point_body)
    assert [f.name for f in records.fields(ours)] == [f.name for f in dataclasses.fields(std)]
    assert ours.__match_args__ == std.__match_args__
    assert ours.KIND == "point" and "KIND" not in [f.name for f in records.fields(ours)]
    original = ours(1, 2, ["a"]) if not options.get("kw_only") else ours(x=1, y=2, tags=["a"])
    changed = records.replace(original, y=5)
    assert (changed.x, changed.y, changed.tags) == (1, 5, ["a"])
    assert changed is not original
    assert hasattr(std, "__slots__") == hasattr(ours, "__slots__")
    if options.get("slots"):
        with pytest.raises(AttributeError):
            original.extra = 1


def test_a_frozen_record_refuses_assignment_and_deletion_like_dataclasses() -> None:
    _, ours = both({"frozen": True, "slots": True}, point_body)
    made = ours(1)
    with pytest.raises(records.FrozenInstanceError):
        made.x = 2
    with pytest.raises(records.FrozenInstanceError):
        del made.x
    assert isinstance(records.FrozenInstanceError(), AttributeError)
    assert made.x == 1


def test_copies_and_pickles_of_frozen_slotted_records_survive() -> None:
    made = Frozen(1, ("a",))
    assert copy.copy(made) == made
    assert copy.deepcopy(made) == made
    assert pickle.loads(pickle.dumps(made)) == made


@records.dataclass(frozen=True, slots=True)
class Frozen:
    a: int
    b: tuple[str, ...] = ()


def test_inheritance_post_init_and_init_false_fields() -> None:
    @records.dataclass(kw_only=True, slots=True)
    class Base:
        stamp: int = records.field(default_factory=lambda: 7)
        meta: dict[str, Any] | None = None

    @records.dataclass(kw_only=True, slots=True)
    class Named(Base):
        NAME: ClassVar[str] = "n"
        name: str = records.field(default="", init=False)
        size: int

        def __post_init__(self) -> None:
            self.name = f"{self.NAME}{self.size}"

    made = Named(size=3)
    assert (made.stamp, made.meta, made.name, made.size) == (7, None, "n3", 3)
    assert [f.name for f in records.fields(made)] == ["stamp", "meta", "name", "size"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'name'"):
        Named(size=1, name="x")
    with pytest.raises(TypeError, match="missing 1 required argument: 'size'"):
        Named()
    with pytest.raises(TypeError, match="positional"):
        Named(3)
    with pytest.raises(ValueError, match="init=False"):
        records.replace(made, name="y")
    assert records.replace(made, size=4).name == "n4"


def test_definition_errors_match_dataclasses() -> None:
    for library in (dataclasses, records):
        with pytest.raises(ValueError, match="mutable default"):

            @library.dataclass
            class Mutable:
                items: list[int] = []  # noqa: RUF012 - the error under test

        with pytest.raises(TypeError, match="non-default argument"):

            @library.dataclass
            class Order:
                a: int = 0
                b: int

        with pytest.raises(TypeError, match="no type annotation"):

            @library.dataclass
            class Unannotated:
                a = library.field(default=0)

        @library.dataclass(frozen=True)
        class Still:
            a: int = 0

        with pytest.raises(TypeError):

            @library.dataclass
            class Thawed(Still):
                b: int = 0


def test_asdict_turns_nested_records_into_dicts() -> None:
    @records.dataclass(slots=True)
    class Inner:
        n: int

    @records.dataclass(slots=True)
    class Outer:
        inner: Inner
        many: list[Inner]
        by: dict[str, Inner]

    made = Outer(Inner(1), [Inner(2)], {"k": Inner(3)})
    assert records.asdict(made) == {"inner": {"n": 1}, "many": [{"n": 2}], "by": {"k": {"n": 3}}}
    with pytest.raises(TypeError):
        records.asdict({"not": "a record"})


def test_a_record_inside_itself_prints_without_recursing() -> None:
    @records.dataclass
    class Node:
        children: list[Any]

    node = Node([])
    node.children.append(node)
    assert repr(node).endswith("Node(children=[...])")


def test_an_unsupported_option_is_an_error_at_definition() -> None:
    with pytest.raises(TypeError):
        records.dataclass(order=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="InitVar"):

        @records.dataclass
        class Uses:
            x: InitVar[int]  # type: ignore[name-defined]  # noqa: F821


def test_no_module_of_agentcli_imports_dataclasses() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if "dataclasses" in names:
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
