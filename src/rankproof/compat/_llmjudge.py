"""evalkit's ``LLMJudge(rubric, model, scale=5, cache_path=...)`` over rankproof's `Judge`.

``scale=5`` means the labels 1..5 (an integer ``n >= 2`` means 1..n; a list
of labels passes through). The judge is a per-case metric ``(response, case)
-> float``, so evalkit's ``register_metric("helpfulness",
higher_is_better=True)(judge)`` registers it. Its verdicts are cached under
``cache_path`` (a directory: one file per verdict, keyed by model, rubric,
scale, prompt template and the judged input, never latency), so an unchanged
rerun makes no call. The model is served by a provider
(`rankproof.providers`): ``provider=`` a `ProviderConfig` or the path of a
provider file; without one, the OpenAI conventions ``OPENAI_BASE_URL`` (and
``OPENAI_API_KEY`` when set) name it. ``call=`` (``(prompt, *, model) -> str``)
replaces the provider, e.g. in tests.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError, InputError
from rankproof._io import PathLike
from rankproof.providers import ProviderConfig, load_provider_config
from rankproof.rag import Context, Judge, ProviderCall


def _labels(scale: int | Sequence[int | str]) -> list[int | str]:
    if isinstance(scale, bool):
        raise InputError(f"scale must be an integer >= 2 or a list of labels, got {scale!r}",
                         field="scale")
    if isinstance(scale, int):
        if scale < 2:
            raise InputError(f"scale={scale} gives fewer than two labels; scale=5 means 1..5",
                             field="scale")
        return list(range(1, scale + 1))
    return list(scale)


def _provider(provider: ProviderConfig | PathLike | None, model: str) -> ProviderConfig:
    if isinstance(provider, ProviderConfig):
        return provider.model_copy(update={"model": model})
    if provider is not None:
        return load_provider_config(provider).model_copy(update={"model": model})
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        raise ConfigError("LLMJudge needs a provider: pass provider= (a ProviderConfig or a "
                          "provider file) or set OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1)")
    return ProviderConfig(name="judge", base_url=base_url, model=model,
                          api_key_env="OPENAI_API_KEY" if "OPENAI_API_KEY" in os.environ
                          else None)


class LLMJudge:
    """evalkit's LLM judge as a rankproof per-case metric (see the module docstring)."""

    def __init__(self, rubric: str, model: str, scale: int | Sequence[int | str] = 5,
                 cache_path: PathLike | None = None, *,
                 provider: ProviderConfig | PathLike | None = None,
                 call: Callable[..., str] | None = None) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InputError("model is required: name the judge model (it is part of what a "
                             f"judged score means), got {model!r}", field="model")
        if call is None:
            call = ProviderCall(_provider(provider, model), _labels(scale))
        self.judge = Judge(rubric, model, _labels(scale), call,
                           cache_dir=None if cache_path is None else Path(cache_path),
                           name="LLMJudge")
        self.rubric, self.model, self.scale = rubric, model, self.judge.scale
        self.__name__ = "LLMJudge"

    def __call__(self, response: Any, case: Any) -> float:
        """The judge's score of ``response`` for ``case`` (an invalid verdict is an
        `InputError` naming the case and why, never a guessed score)."""
        answer = response.text if getattr(response, "text", None) else " ".join(
            getattr(response, "ranked_ids", ()) or ())
        raw = (getattr(response, "meta", None) or {}).get("contexts") or ()
        contexts = [Context(str(i), c if isinstance(c, str) else str(c.get("text", "")))
                    for i, c in enumerate(raw, 1) if isinstance(c, str | dict)]
        verdict, _ = self.judge.judge_one(case.id, case.query, answer, contexts)
        if verdict.score is None or isinstance(verdict.score, str):
            raise InputError(f"case {case.id!r}: the judge gave no score ({verdict.error})",
                             field="LLMJudge")
        return float(verdict.score)
