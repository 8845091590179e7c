"""Rules declare their prose: every explanation is a template of the
``@rule`` declaration, in English and Chinese, filled by ``finding(...)``
(issue 14). Rule bodies pass values, never sentences."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from engine import rules
from engine.rules import REGISTRY, Finding, Joined, Phrase, RuleSpec, load_all, rule, template_fields

RULES_DIR = Path(rules.__file__).resolve().parent
MODULES = sorted(p for p in RULES_DIR.glob("*.py") if p.name != "__init__.py")
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# three words in a row: a sentence, not a fact path, a unit or a separator
WORDS = re.compile(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+")


def test_every_rule_declares_its_explanations_in_both_languages():
    for spec in load_all().values():
        assert spec.explanations, spec.id
        for name, (en, zh) in spec.explanations.items():
            assert en.strip() and zh.strip(), (spec.id, name)
            assert not CJK.search(en), (spec.id, name)


def _body_strings(tree: ast.Module) -> list[tuple[int, str]]:
    """String literals inside function bodies (decorators and docstrings
    excluded): the text a rule builds at run time."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for stmt in body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    out.append((sub.lineno, sub.value))
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_rule_bodies_build_no_prose(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = [(line, text) for line, text in _body_strings(tree) if CJK.search(text) or WORDS.search(text)]
    assert not prose, f"{path.name}: sentences belong in the @rule declaration: {prose}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "finding":
            assert len(node.args) <= 3, (
                f"{path.name}:{node.lineno}: finding(rule, host, template, values=...)"
            )
            assert not {k.arg for k in node.keywords} & {"explanation", "explanation_zh"}, node.lineno


def _spec(**kw) -> RuleSpec:
    name = "test.explanations"
    REGISTRY.pop(name, None)

    def func(ctx):
        return []

    try:
        rule(
            name, severity="info", title="t", title_zh="t", condition="c", condition_zh="c", requires=(), **kw
        )(func)
        return REGISTRY[name]
    finally:
        REGISTRY.pop(name, None)


def test_a_rule_without_a_chinese_template_is_refused():
    with pytest.raises(ValueError, match="English and Chinese"):
        _spec()  # no explanation at all
    with pytest.raises(ValueError, match="English and Chinese"):
        _spec(explanation="{host} is slow.")
    with pytest.raises(ValueError, match="English and Chinese"):
        _spec(explanations={"one": ("{host} is slow.", "")})
    with pytest.raises(ValueError, match="both given"):
        _spec(explanation="a", explanation_zh="甲", explanations={"one": ("b", "乙")})


def test_templates_are_filled_in_each_language_with_the_same_numbers():
    spec = _spec(
        explanations={
            "": ("{host}: {items} ({share:.0%}).", "{host}：{items}（{share:.0%}）。"),
            "item": ("node {node}", "节点 {node}"),
            "sep": (", ", "，"),
        }
    )
    items = Joined("sep", (Phrase("item", {"node": 0}), Phrase("item", {"node": 1})))
    assert spec.explain("", {"host": "db1", "items": items, "share": 0.456}) == (
        "db1: node 0, node 1 (46%).",
        "db1：节点 0，节点 1（46%）。",
    )
    assert template_fields("{a} and {b:.1f}") == {"a", "b"}


def test_finding_fills_the_declared_template_and_keeps_its_values():
    load_all()
    f = rules.finding("disk.latency_high", None, values={"device": "sda", "await_ms": 12.5, "util_pct": 90.0})
    assert isinstance(f, Finding)
    assert f.explanation.startswith("Device sda: await 12.5 ms, utilisation 90.0%.")
    assert f.explanation_zh.startswith("设备 sda：await 12.5 ms，利用率 90.0%。")
    assert (f.template, f.values["device"]) == ("", "sda")
