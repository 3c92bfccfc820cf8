"""Rule files: one failure class per TOML file under `patterns/<area>/<name>.toml`.

The id is taken from the path (`area.name`). A rule has a title, severity, priority, `[[match]]`
regexes with named captures, optional `[[context]]` regexes that pick up values elsewhere in the
same run (the nvcc version, CUDA_HOME), `explains` (classes it causes), and text for people:
explanation and remediation templates that use the captures, `avoid`, references.
See ARCHITECTURE.md for the full format and the priority bands.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import string
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping

from logsift.exceptions import RuleError
from logsift.records import Severity
from logsift.rules import facts as facts_module
from logsift.rules import literals as literals_module
from logsift.rules import pattern as pattern_module
from logsift.rules.facts import FILE as FACTS_FILE
from logsift.rules.facts import FactRule, load_facts
from logsift.rules.pattern import LazyRegex, Pattern, compile_pattern

SIGNALS = ("ready", "failure", "handled")  # a run came up; a run failed (without saying why); an error it carried on from
_KEYS = {
    "title", "severity", "priority", "explains", "explains_fallback", "explanation", "remediation", "avoid",
    "references", "match", "context", "defaults", "signal", "tags", "versions", "description",
}
_RULE_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\.[a-z0-9]+(?:-[a-z0-9]+)*$")
_REQUIRED = ("title", "severity", "priority", "match", "explanation")


@dataclass(frozen=True)
class Rule:
    id: str
    path: Path
    title: str
    severity: Severity
    priority: int
    matches: tuple[Pattern, ...]
    context: tuple[Pattern, ...] = ()
    explains: tuple[str, ...] = ()
    # Classes whose weaker evidence only (their `fallback = true` matches) this rule explains: a
    # bare "Killed" after the engine said it stops itself, not the kernel's own kill line.
    explains_fallback: tuple[str, ...] = ()
    explanation: str = ""
    remediation: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    defaults: Mapping[str, str] = field(default_factory=dict)
    signal: str | None = None
    tags: tuple[str, ...] = ()
    versions: Mapping[str, str] = field(default_factory=dict)

    @property
    def weak(self) -> bool:
        """Its findings say *that* something failed, not why: catch-alls, wrappers, systemd's
        generic lines (priority 30 or less) and signals. They do not claim an event."""
        return self.signal is not None or self.priority <= 30 or bool({"catch-all", "wrapper"} & set(self.tags))

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def sample_path(self) -> Path:
        return self.path.with_suffix(".log")

    @cached_property
    def primary(self) -> tuple[Pattern, ...]:
        return tuple(pattern for pattern in self.matches if not pattern.fallback)

    @cached_property
    def fallbacks(self) -> tuple[Pattern, ...]:
        return tuple(pattern for pattern in self.matches if pattern.fallback)

    @cached_property
    def captures(self) -> frozenset[str]:
        names: set[str] = set()
        for pattern in (*self.matches, *self.context):
            names.update(pattern.compiled.groupindex)
        return frozenset(names)

    def render(self, template: str, fields: Mapping[str, str]) -> str:
        return _Template(fields, self.defaults).format(template)

    def texts(self) -> Iterable[tuple[str, str]]:
        """(where, template) for every text that may use captures; for checks."""
        yield "title", self.title
        yield "explanation", self.explanation
        for index, text in enumerate(self.remediation):
            yield f"remediation[{index}]", text
        for index, text in enumerate(self.avoid):
            yield f"avoid[{index}]", text


class _Template(string.Formatter):
    """str.format over captures, then defaults; a value nobody captured reads as a phrase."""

    def __init__(self, fields: Mapping[str, str], defaults: Mapping[str, str]) -> None:
        self.fields = fields
        self.defaults = defaults

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        name = str(key)
        value = self.fields.get(name) or self.defaults.get(name)
        return value if value else f"<{name} not in the log>"

    def format_field(self, value: Any, format_spec: str) -> Any:
        # Checked at load time (template_names): a spec here would come from a rule loaded
        # around the checks; never let it pad a value to gigabytes.
        return str(value)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return value


def template_names(template: str) -> set[str]:
    """The capture names a template uses. Only plain `{name}` fields are allowed: a conversion
    (`{v!r}`), a format spec (`{v:>999999999}`), an attribute or index (`{v.__class__}`) or a
    positional `{}` would fail, flood or leak at run time, so they are a RuleError here."""
    names: set[str] = set()
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if conversion is not None or spec:
            shown = name + (f"!{conversion}" if conversion is not None else "") + (f":{spec}" if spec else "")
            raise ValueError(f"{{{shown}}}: templates take plain {{name}} fields only (no conversion or format "
                             "spec); write {{ and }} for literal braces")
        if not name.isidentifier():
            raise ValueError(f"{{{name}}}: a field is the name of a capture or a [defaults] entry "
                             "(letters, digits, underscore); write {{ and }} for literal braces")
        names.add(name)
    return names


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    # Site rule files that were skipped because they are broken, one `file:line: reason` each.
    skipped: tuple[str, ...] = ()
    # The [[fact]] entries of every facts.toml (values that describe a run), bundled ones first.
    facts: tuple[FactRule, ...] = ()

    @cached_property
    def by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}

    @cached_property
    def digest(self) -> str:
        """Changes whenever any rule or sample file changes: keys caches of derived data."""
        hasher = hashlib.sha256()
        for rule in self.rules:
            hasher.update(rule.path.read_bytes())
            if rule.sample_path.exists():
                hasher.update(rule.sample_path.read_bytes())
        return hasher.hexdigest()[:16]

    def __len__(self) -> int:
        return len(self.rules)

    def without(self, ids: Iterable[str]) -> RuleSet:
        drop = set(ids)
        return RuleSet(tuple(rule for rule in self.rules if rule.id not in drop), self.skipped, self.facts)

    @cached_property
    def fact_labels(self) -> dict[str, str]:
        """name -> label of every fact, in the order the facts files define them."""
        labels: dict[str, str] = {}
        for fact in self.facts:
            labels.setdefault(fact.name, fact.label)
        return labels


def default_pattern_dirs() -> list[Path]:
    """The bundled library: the checkout's `patterns/`, or the copy installed with the package."""
    env = os.environ.get("LOGSIFT_PATTERNS")
    if env:
        return [Path(part) for part in env.split(os.pathsep) if part]
    package = Path(__file__).resolve().parents[1]  # logsift/
    for candidate in (package.parent / "patterns", package / "patterns"):
        if candidate.is_dir():
            return [candidate]
    return []


def load_rules(directories: Iterable[Path] | None = None, extra: Iterable[Path] = (),
               strict: bool = True, cache: bool = True) -> RuleSet:
    """Every `*.toml` under the directories; a later directory's rule replaces an earlier id.

    `extra` are site directories (`--patterns`). With `strict=False` a broken rule file there is
    skipped and named in `RuleSet.skipped`, so that one bad site rule cannot take triage down;
    the bundled library (and `patterns check`) is always strict.

    A library that loaded before is read back from the user cache (`cache`), keyed by every rule
    file's path, size and time: no TOML, no literal derivation, and the regexes compiled only
    when first used (most runs use a few), which is most of logsift's start-up.
    """
    bundled = list(directories if directories is not None else default_pattern_dirs())
    extra = list(extra)
    key = _cache_key(bundled, extra, strict) if cache else None
    if key is not None:
        cached = _read_cache(key)
        if cached is not None:
            return cached
    rules = _load_rules(bundled, extra, strict)
    if key is not None:
        _write_cache(key, rules)
    return rules


def _load_rules(bundled: list[Path], extra: list[Path], strict: bool) -> RuleSet:
    found: dict[str, Rule] = {}
    site: set[str] = set()
    skipped: list[str] = []
    facts: list[FactRule] = []
    for directory in [*bundled, *extra]:
        lenient = not strict and directory in extra and directory not in bundled
        if not directory.is_dir():
            if lenient:
                skipped.append(f"{directory}: rule directory does not exist")
                continue
            raise RuleError("rule directory does not exist", str(directory))
        for path in sorted(directory.rglob("*.toml")):
            try:
                relative = path.relative_to(directory)
                if relative.parts == (FACTS_FILE,):
                    facts.extend(load_facts(path))
                    continue
                if len(relative.parts) != 2:
                    raise RuleError(f"rule files live at <area>/<name>.toml (and facts in {FACTS_FILE} at the top)",
                                    str(path))
                rule_id = f"{relative.parts[0]}.{path.stem}"
                if not _RULE_ID.match(rule_id):
                    raise RuleError(f"rule id {rule_id!r} is not area.name in kebab-case (lowercase letters, digits, "
                                    "hyphens): the id is taken from the path; rename the file", str(path))
                rule = load_rule(path, rule_id)
            except RuleError as error:
                if not lenient:
                    raise
                skipped.append(str(error))
                continue
            found[rule.id] = rule
            if lenient:
                site.add(rule.id)
    for rule in list(found.values()):
        unknown = [other for other in (*rule.explains, *rule.explains_fallback) if other not in found]
        if unknown and rule.id in site:
            skipped.append(f"{_where(rule.path, 'explains')}: explains unknown class {unknown[0]!r}; rule skipped")
            del found[rule.id]
        elif unknown:
            raise RuleError(f"explains unknown class {unknown[0]!r}", _where(rule.path, "explains"))
    rules = tuple(sorted(found.values(), key=lambda rule: (-rule.priority, rule.id)))
    return RuleSet(rules, tuple(skipped), tuple(facts))


def load_rule(path: Path, rule_id: str) -> Rule:
    import tomllib  # only when a file is parsed (start-up reads the cache)

    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RuleError(f"invalid TOML: {error}", str(path)) from None
    for key in _REQUIRED:
        if key not in data:
            raise RuleError(f"missing required key {key!r}", str(path))
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise RuleError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})", _where(path, unknown[0], text))
    try:
        severity = Severity.parse(str(data["severity"]))
    except KeyError:
        raise RuleError(
            f"severity {data['severity']!r} is not one of info, warning, error, critical",
            _where(path, "severity", text),
        ) from None
    priority = data["priority"]
    if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 100:
        raise RuleError("priority must be an integer from 0 to 100", _where(path, "priority", text))
    signal = data.get("signal")
    if signal is not None and signal not in SIGNALS:
        raise RuleError(f"signal must be one of {', '.join(SIGNALS)}", _where(path, "signal", text))
    matches = _patterns(path, text, data["match"], "match")
    if not matches:
        raise RuleError("a rule needs at least one [[match]]", str(path))
    rule = Rule(
        id=rule_id,
        path=path,
        title=_string(path, text, data, "title"),
        severity=severity,
        priority=priority,
        matches=matches,
        context=_patterns(path, text, data.get("context", []), "context"),
        explains=_strings(path, text, data, "explains"),
        explains_fallback=_strings(path, text, data, "explains_fallback"),
        explanation=_string(path, text, data, "explanation").strip(),
        remediation=_strings(path, text, data, "remediation"),
        avoid=_strings(path, text, data, "avoid"),
        references=_strings(path, text, data, "references"),
        defaults=_table(path, text, data, "defaults"),
        signal=signal,
        tags=_strings(path, text, data, "tags"),
        versions=_table(path, text, data, "versions"),
    )
    for where, template in rule.texts():
        try:
            names = template_names(template)
        except ValueError as error:
            raise RuleError(f"{where}: bad template: {error}", _where(path, where.split("[")[0], text)) from None
        missing = sorted(names - rule.captures - set(rule.defaults))
        if missing:
            raise RuleError(
                f"{where} uses {{{missing[0]}}}, which no regex captures and [defaults] lacks",
                _where(path, where.split("[")[0], text),
            )
    return rule


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RuleError(f"not UTF-8 (byte {error.start})", str(path)) from None
    except OSError as error:
        raise RuleError(error.strerror or str(error), str(path)) from None


def _patterns(path: Path, text: str, entries: Any, kind: str) -> tuple[Pattern, ...]:
    if not isinstance(entries, list):
        raise RuleError(f"{kind} must be an array of tables ([[{kind}]])", _where(path, kind, text))
    patterns = []
    header = text.find(f"[[{kind}]]")
    search_from = header if header >= 0 else 0
    for index, entry in enumerate(entries):
        line = _line_of(text, "regex", search_from)
        search_from = _offset_of_line(text, line)
        where = f"{path}:{line}"
        if not isinstance(entry, dict) or not isinstance(entry.get("regex"), str):
            raise RuleError(f"[[{kind}]] #{index + 1} needs a regex string", where)
        fallback = entry.get("fallback", False)
        if not isinstance(fallback, bool) or (fallback and kind != "match"):
            raise RuleError("fallback must be true or false, and only on a [[match]]", where)
        unknown = sorted(set(entry) - {"regex", "literals", "fallback"})
        if unknown:
            raise RuleError(f"unknown key {unknown[0]!r} in [[{kind}]] (known: regex, literals, fallback)", where)
        patterns.append(compile_pattern(entry["regex"], entry.get("literals"), where, index, line, fallback))
    return tuple(patterns)


def _string(path: Path, text: str, data: Mapping[str, Any], key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise RuleError(f"{key} must be a string", _where(path, key, text))
    return value


def _strings(path: Path, text: str, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RuleError(f"{key} must be a list of strings", _where(path, key, text))
    return tuple(value)


def _table(path: Path, text: str, data: Mapping[str, Any], key: str) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(item, (str, int, float, bool)) for item in value.values()):
        raise RuleError(f"{key} must be a table of names to strings ([{key}] with name = \"value\" lines)",
                        _where(path, key, text))
    return {str(name): str(item) for name, item in value.items()}


def _line_of(text: str, key: str, start: int = 0) -> int:
    for number, line in enumerate(text[start:].splitlines(), text[:start].count("\n") + 1):
        stripped = line.lstrip()
        if stripped.startswith(key) and stripped[len(key) :].lstrip().startswith("="):
            return number
    return 1


def _offset_of_line(text: str, line: int) -> int:
    offset = 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset


def _where(path: Path, key: str, text: str | None = None) -> str:
    if text is None:
        text = _read(path)
    return f"{path}:{_line_of(text, key)}"


# -- the cached library -------------------------------------------------------------------------

RULES_CACHE_FORMAT = 2  # bump when Rule or Pattern change shape
KEEP_CACHED = 20


def _cache_key(bundled: list[Path], extra: list[Path], strict: bool) -> str | None:
    from logsift import __version__

    hasher = hashlib.sha256(f"{RULES_CACHE_FORMAT}:{__version__}:{strict}:{len(bundled)}".encode())
    for module in (__file__, literals_module.__file__, pattern_module.__file__, facts_module.__file__):
        hasher.update(Path(module).read_bytes())
    for directory in [*bundled, *extra]:
        hasher.update(f"\0{directory.resolve()}\0".encode("utf-8", "surrogateescape"))
        try:
            paths = sorted(directory.rglob("*.toml")) if directory.is_dir() else []
            for path in paths:
                status = path.stat()
                hasher.update(f"{path}:{status.st_size}:{status.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
        except OSError:
            return None
    return hasher.hexdigest()[:24]


def _cache_path(key: str) -> Path:
    from logsift.cache import cache_dir

    return cache_dir() / f"rules-{key}.json"


def _read_cache(key: str) -> RuleSet | None:
    try:
        data = json.loads(_cache_path(key).read_text(encoding="utf-8"))
        return RuleSet(tuple(_rule_from(item) for item in data["rules"]), tuple(data["skipped"]),
                       tuple(_fact_from(item) for item in data["facts"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or damaged: load the files


def _write_cache(key: str, rules: RuleSet) -> None:
    from logsift.cache import make_cache

    path = _cache_path(key)
    data = {"rules": [_rule_to(rule) for rule in rules.rules], "skipped": list(rules.skipped),
            "facts": [_fact_to(fact) for fact in rules.facts]}
    try:
        make_cache(path.parent)  # only the user cache is made with its parents
        import tempfile  # (and shutil with it) only when a cache is written

        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".rules-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, path)
        stale = sorted(path.parent.glob("rules-*.json"), key=lambda item: item.stat().st_mtime, reverse=True)
        for old in stale[KEEP_CACHED:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # an unwritable cache costs the loading next time, nothing else


def _pattern_to(pattern: Pattern) -> list[Any]:
    return [pattern.index, pattern.source, list(pattern.literals), pattern.line, pattern.fallback]


def _pattern_from(item: list[Any]) -> Pattern:
    index, source, literals, line, fallback = item
    return Pattern(index=index, source=source, compiled=LazyRegex(source), literals=tuple(literals), line=line,
                   fallback=fallback)


def _rule_to(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id, "path": str(rule.path), "title": rule.title, "severity": rule.severity.name,
        "priority": rule.priority, "matches": [_pattern_to(pattern) for pattern in rule.matches],
        "context": [_pattern_to(pattern) for pattern in rule.context], "explains": list(rule.explains),
        "explains_fallback": list(rule.explains_fallback), "explanation": rule.explanation, "remediation": list(rule.remediation), "avoid": list(rule.avoid),
        "references": list(rule.references), "defaults": dict(rule.defaults), "signal": rule.signal,
        "tags": list(rule.tags), "versions": dict(rule.versions),
    }


def _rule_from(item: dict[str, Any]) -> Rule:
    return Rule(
        id=item["id"], path=Path(item["path"]), title=item["title"], severity=Severity[item["severity"]],
        priority=item["priority"], matches=tuple(_pattern_from(entry) for entry in item["matches"]),
        context=tuple(_pattern_from(entry) for entry in item["context"]), explains=tuple(item["explains"]),
        explains_fallback=tuple(item["explains_fallback"]), explanation=item["explanation"], remediation=tuple(item["remediation"]), avoid=tuple(item["avoid"]),
        references=tuple(item["references"]), defaults=dict(item["defaults"]), signal=item["signal"],
        tags=tuple(item["tags"]), versions=dict(item["versions"]),
    )


def _fact_to(fact: FactRule) -> dict[str, Any]:
    return {"name": fact.name, "label": fact.label, "kind": fact.kind,
            "pattern": _pattern_to(fact.pattern) if fact.pattern is not None else None, "field": fact.field,
            "path": str(fact.path), "line": fact.line, "index": fact.index}


def _fact_from(item: dict[str, Any]) -> FactRule:
    return FactRule(name=item["name"], label=item["label"], kind=item["kind"],
                    pattern=_pattern_from(item["pattern"]) if item["pattern"] is not None else None,
                    field=item["field"], path=Path(item["path"]), line=item["line"], index=item["index"])
