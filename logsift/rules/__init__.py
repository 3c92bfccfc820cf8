"""The rule library: one failure class per TOML file under `patterns/<area>/<name>.toml`.

`library` loads and checks rule files into a `RuleSet`; `literals` derives the text each regex
requires; `prefilter` searches those literals over many lines at once; `regex_risk` flags
regexes that can backtrack; `samples` reads the annotated sample logs beside each rule.
"""

from logsift.rules.library import Pattern, Rule, RuleSet, default_pattern_dirs, load_rule, load_rules

__all__ = ["Pattern", "Rule", "RuleSet", "default_pattern_dirs", "load_rule", "load_rules"]
