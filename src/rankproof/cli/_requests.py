"""A command's options as one typed request, its settings derived from the library's types.

A command used to take each option as its own parameter (``measure`` took 29), so the same
settings were spelled out, defaulted and re-checked in every command that has them. Here
a command declares one `Request` class, its *request*, and takes one parameter:

    class MeasureArgs(Request):
        qrels: Path = qrels_argument()
        options: EvalOptions = settings(EvalOptions)
        ...

    @app.command()
    @error_boundary
    @takes(MeasureArgs)
    def measure(a: MeasureArgs) -> None: ...

`takes` gives Typer the signature it reads options from: each annotated attribute (a
*field*) of the request, in order, with its value (a Typer option or argument) and
annotation. A field whose value is `settings` stands for the fields of a settings
dataclass of a lower floor (`rankproof.measures.EvalOptions`,
`rankproof.stats.StatSettings`), each offered as the option its ``metadata`` describes
(`rankproof.cli._derived.field_option`), its choices taken from its ``Literal`` type.
When the command runs, the parsed values become the settings object (validated there,
once: an invalid value is an `InputError` naming the setting, exit 2) and the request,
which the command receives. So an option a
settings type gains reaches every command that offers that type, with no edit here.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args, get_origin

from rankproof.cli._derived import UNSET, field_option

__all__ = ["Request", "settings", "takes"]


class Request:
    """A command's options as one frozen object: each annotated class attribute is a field,
    its value the option (or argument) Typer offers, or `settings` for a settings type's.

    A plain class rather than a dataclass: the fields' defaults are Typer's option objects,
    which `takes` reads and the instance replaces with the parsed values."""

    def __init__(self, **values: Any) -> None:
        missing = set(field_names(type(self))) - set(values)
        if missing:
            raise TypeError(f"{type(self).__name__} lacks {sorted(missing)}")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name} cannot be set")

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in field_names(type(self)))
        return f"{type(self).__name__}({shown})"


def field_names(cls: type) -> list[str]:
    """The request's fields, in the order they are declared (base classes first)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name in vars(klass).get("__annotations__", {}):
            if not name.startswith("_") and name not in names:
                names.append(name)
    return names


R = TypeVar("R", bound=Request)


@dataclass(frozen=True)
class _Settings:
    """`settings`' marker: which settings type, which of its fields, and any overrides."""

    cls: type
    only: tuple[str, ...] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    helps: Mapping[str, str] = field(default_factory=dict)

    def names(self) -> list[str]:
        offered = [f.name for f in dataclasses.fields(self.cls) if "flags" in f.metadata]
        if self.only is None:
            return offered
        unknown = set(self.only) - set(offered)
        if unknown:
            raise TypeError(f"{self.cls.__name__} offers no option {sorted(unknown)}")
        return [n for n in offered if n in self.only]

    def parameters(self) -> list[inspect.Parameter]:
        hints = typing.get_type_hints(self.cls)
        return [inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=_cli_type(hints[name], name),
            default=field_option(self.cls, name, self.defaults.get(name, UNSET),
                                 self.helps.get(name)))
            for name in self.names()]

    def build(self, values: Mapping[str, Any]) -> Any:
        return self.cls(**{k: _plain(v) for k, v in values.items()})


def settings(cls: type, *, only: tuple[str, ...] | None = None,
             defaults: Mapping[str, Any] | None = None,
             helps: Mapping[str, str] | None = None) -> Any:
    """A request field's default that stands for the options of settings type ``cls``
    (those of ``only``, when given), with other ``defaults`` or ``helps`` where the command
    means something narrower."""
    return _Settings(cls, only, dict(defaults or {}), dict(helps or {}))


def _cli_type(annotation: Any, name: str) -> Any:
    """A settings field's type as Typer reads it: a ``Literal`` becomes a choice type."""
    from rankproof.cli._runs import choices

    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return choices(f"{name.title()}Choice", args)
    if type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return _cli_type(inner, name) | None
    return annotation


def _plain(value: Any) -> Any:
    """A parsed value as the settings type takes it: a choice member becomes its string."""
    return value.value if isinstance(value, enum.Enum) else value


def takes(request: type[R]) -> Callable[[Callable[[R], Any]], Callable[..., Any]]:
    """Give a command taking one ``request`` the signature of the request's fields (see the
    module docstring), and build the request from the parsed values when it runs."""
    hints = typing.get_type_hints(request, include_extras=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, tuple[_Settings, list[str]]] = {}
    for name in field_names(request):
        default = getattr(request, name, inspect.Parameter.empty)
        if isinstance(default, _Settings):
            expanded = default.parameters()
            groups[name] = (default, [p.name for p in expanded])
            parameters.extend(expanded)
        else:
            parameters.append(inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[name], default=default))
    seen = [p.name for p in parameters]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise TypeError(f"{request.__name__}: options declared twice: {twice}")

    def decorate(command: Callable[[R], Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(**values: Any) -> Any:
            for name, (group, names) in groups.items():
                values[name] = group.build({n: values.pop(n) for n in names})
            return command(request(**values))

        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate
