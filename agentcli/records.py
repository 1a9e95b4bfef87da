"""Data classes that cost nothing to define: the part of `dataclasses` agentcli uses.

Python 3.11's `dataclasses` writes each class's `__init__`, `__repr__`, `__eq__` (and, for
frozen classes, `__setattr__`, `__delattr__`, `__hash__`) as source text and compiles it
with `exec` when the class is defined, for every class, most of which a run never
instantiates; importing it also imports `inspect`. Here the methods are shared functions
that read the class's field table, so defining a class costs next to nothing and making an
instance a little more than with a generated `__init__`. What that saves a run is measured
by bench/standins.py (figures in bench/README.md); tests/test_records.py compares both.

Supported: `dataclass(frozen=, slots=, kw_only=, eq=, repr=)`, `field(default=,
default_factory=, init=, repr=, compare=, hash=, kw_only=)`, `ClassVar` annotations,
inheritance, `__post_init__`, and `fields`, `replace`, `asdict`. Anything else
(`order=`, `InitVar`, `KW_ONLY`) is a TypeError at definition, not a silent difference.
"""

from __future__ import annotations

from _thread import get_ident
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, dataclass_transform

T = TypeVar("T")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    """One field: its name, annotation (as written) and how `__init__` fills it."""

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "kw_only",
        "name",
        "repr",
        "type",
    )

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
        hash: bool | None = None,
        kw_only: Any = MISSING,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.hash = hash
        self.kw_only = kw_only

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    hash: bool | None = None,
    kw_only: Any = MISSING,
) -> Any:
    return Field(default, default_factory, init, repr, compare, hash, kw_only)


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(
    cls: type[T] | None = None,
    /,
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    kw_only: bool = False,
    slots: bool = False,
) -> Any:
    """Decorate a class as a record (used like `dataclasses.dataclass`)."""

    def wrap(cls: type[T]) -> type[T]:
        return _process(cls, init, repr, eq, frozen, kw_only, slots)

    return wrap if cls is None else wrap(cls)


def fields(record: Any) -> tuple[Field, ...]:
    """The fields of a record class or instance, in definition order."""
    try:
        return record.__record_fields__  # type: ignore[no-any-return]
    except AttributeError:
        raise TypeError("must be called with a record type or instance") from None


def replace(record: T, /, **changes: Any) -> T:
    """A copy of `record` with `changes` applied, made through its `__init__`."""
    for item in fields(record):
        if not item.init:
            if item.name in changes:
                raise ValueError(
                    f"field {item.name} is declared with init=False, it cannot be "
                    "specified with replace()"
                )
        elif item.name not in changes:
            changes[item.name] = getattr(record, item.name)
    return record.__class__(**changes)


def asdict(record: Any) -> dict[str, Any]:
    """A record as a dict, records inside it (in lists, tuples, dicts) as dicts too."""
    fields(record)  # a TypeError for anything else
    return _as_plain(record)  # type: ignore[no-any-return]


def is_record(thing: Any) -> bool:
    return hasattr(thing, "__record_fields__")


def _as_plain(value: Any) -> Any:
    if hasattr(type(value), "__record_fields__"):
        return {f.name: _as_plain(getattr(value, f.name)) for f in value.__record_fields__}
    if isinstance(value, list | tuple):
        items = [_as_plain(item) for item in value]
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, dict):
        return type(value)((_as_plain(k), _as_plain(v)) for k, v in value.items())
    return value


def _is_class_var(annotation: Any) -> bool:
    if isinstance(annotation, str):  # `from __future__ import annotations`
        text = annotation.replace(" ", "")
        for unsupported in ("InitVar", "KW_ONLY"):
            if text.startswith((unsupported, f"dataclasses.{unsupported}")):
                raise TypeError(f"records do not support {unsupported}")
        return text == "ClassVar" or text.startswith(("ClassVar[", "typing.ClassVar"))
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def _own_fields(cls: type, kw_only: bool) -> list[Field]:
    own = []
    # Not inspect.get_annotations: importing inspect is one of the costs this module avoids.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if _is_class_var(annotation):
            continue
        default = cls.__dict__.get(name, MISSING)
        item = default if isinstance(default, Field) else Field(default)
        item.name, item.type = name, annotation
        if item.kw_only is MISSING:
            item.kw_only = kw_only
        if item.default is not MISSING and type(item.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(item.default)} for field {name} is not "
                "allowed: use default_factory"
            )
        own.append(item)
    named = {item.name for item in own}
    for name, value in cls.__dict__.items():
        if isinstance(value, Field) and name not in named:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    return own


def _process(
    cls: type[T], init: bool, repr: bool, eq: bool, frozen: bool, kw_only: bool, slots: bool
) -> type[T]:
    table: dict[str, Field] = {}
    base_frozen = None
    for base in cls.__mro__[-1:0:-1]:
        if "__record_fields__" in base.__dict__:
            table.update((f.name, f) for f in base.__dict__["__record_fields__"])
            base_frozen = base.__dict__["__record_frozen__"]
    if base_frozen is not None and base_frozen != frozen:
        kind = "frozen" if frozen else "non-frozen"
        raise TypeError(f"cannot inherit {kind} record from a {'non-' * frozen}frozen one")
    own = _own_fields(cls, kw_only)
    table.update((f.name, f) for f in own)
    every = tuple(table.values())
    _check_order(every)

    for item in own:  # the class keeps plain defaults as attributes, as dataclasses does
        if isinstance(cls.__dict__.get(item.name), Field):
            if item.default is MISSING:
                delattr(cls, item.name)
            else:
                setattr(cls, item.name, item.default)

    methods: dict[str, Any] = {
        "__record_fields__": every,
        "__record_frozen__": frozen,
        "__match_args__": tuple(f.name for f in every if f.init and not f.kw_only),
    }
    if init:
        methods["__init__"] = _make_init(cls, every, frozen)
    if repr:
        methods["__repr__"] = _make_repr(every)
    if eq:
        methods["__eq__"] = _make_eq(every)
    explicit_hash = "__hash__" in cls.__dict__ and not (
        cls.__dict__["__hash__"] is None and "__eq__" in cls.__dict__
    )
    if eq and not explicit_hash:
        methods["__hash__"] = _make_hash(every) if frozen else None
    if frozen:
        methods.update(_frozen_methods(cls, every))
    for name, value in methods.items():
        if (
            name not in cls.__dict__
            or name.startswith("__record")
            or (name == "__hash__" and not explicit_hash)
        ):
            if callable(value):
                value.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, value)
    return _with_slots(cls, every, frozen) if slots else cls


def _check_order(every: tuple[Field, ...]) -> None:
    seen_default = False
    for item in every:
        if not item.init or item.kw_only:
            continue
        has_default = item.default is not MISSING or item.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {item.name!r} follows default argument")
        seen_default = seen_default or has_default


def _make_init(cls: type, every: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    positional = tuple(f.name for f in every if f.init and not f.kw_only)
    accepted = frozenset(f.name for f in every if f.init)
    plan = tuple((f.name, f.init, f.default, f.default_factory) for f in every)
    assign = object.__setattr__ if frozen else setattr
    post_init = getattr(cls, "__post_init__", None) is not None
    owner = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if args:
            if len(args) > len(positional):
                raise TypeError(
                    f"{owner}.__init__() takes {len(positional) + 1} positional "
                    f"arguments but {len(args) + 1} were given"
                )
            for name, value in zip(positional, args, strict=False):
                if name in kwargs:
                    raise TypeError(f"{owner}.__init__() got multiple values for argument {name!r}")
                kwargs[name] = value
        used = 0
        missing = []
        for name, takes, default, factory in plan:
            if takes and name in kwargs:
                value = kwargs[name]
                used += 1
            elif default is not MISSING:
                value = default
            elif factory is not MISSING:
                value = factory()
            else:
                if takes:
                    missing.append(name)
                continue
            assign(self, name, value)
        if used != len(kwargs):
            extra = next(name for name in kwargs if name not in accepted)
            raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {extra!r}")
        if missing:
            names = " and ".join(repr(name) for name in missing)
            plural = "s" if len(missing) > 1 else ""
            raise TypeError(
                f"{owner}.__init__() missing {len(missing)} required argument{plural}: {names}"
            )
        if post_init:
            self.__post_init__()

    return __init__


def _make_repr(every: tuple[Field, ...]) -> Callable[[Any], str]:
    shown = tuple(f.name for f in every if f.repr)
    busy: set[tuple[int, int]] = set()  # being shown, by thread: a record inside itself is ...

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in busy:
            return "..."
        busy.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        finally:
            busy.discard(key)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    def values(record: Any) -> tuple[Any, ...]:
        return tuple([getattr(record, name) for name in names])

    return values


def _make_eq(every: tuple[Field, ...]) -> Callable[[Any, Any], Any]:
    values = _values(tuple(f.name for f in every if f.compare))

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _make_hash(every: tuple[Field, ...]) -> Callable[[Any], int]:
    values = _values(tuple(f.name for f in every if (f.compare if f.hash is None else f.hash)))

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen_methods(cls: type, every: tuple[Field, ...]) -> dict[str, Any]:
    names = frozenset(f.name for f in every)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return {"__setattr__": __setattr__, "__delattr__": __delattr__}


def _slot_names(cls: type) -> set[str]:
    found: set[str] = set()
    for base in cls.__mro__[1:-1]:
        declared = base.__dict__.get("__slots__", ())
        found.update((declared,) if isinstance(declared, str) else declared)
    return found


def _with_slots(cls: type[T], every: tuple[Field, ...], frozen: bool) -> type[T]:
    """The same class made again with `__slots__` (slots exist only from a class's
    creation, so `dataclasses` makes it again too)."""
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    inherited = _slot_names(cls)
    namespace = dict(cls.__dict__)
    for item in every:
        namespace.pop(item.name, None)  # a default would clash with the slot's descriptor
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(f.name for f in every if f.name not in inherited)
    if frozen:  # copy and pickle restore state with setattr, which a frozen record refuses
        namespace["__getstate__"] = _getstate
        namespace["__setstate__"] = _setstate
    remade: type[T] = type(cls)(cls.__name__, cls.__bases__, namespace)
    remade.__qualname__ = cls.__qualname__
    if frozen:  # the frozen methods compare type(self) with the class: the new one
        for name, method in _frozen_methods(remade, every).items():
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(remade, name, method)
    return remade


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in self.__record_fields__]


def _setstate(self: Any, state: list[Any]) -> None:
    for item, value in zip(self.__record_fields__, state, strict=True):
        object.__setattr__(self, item.name, value)
