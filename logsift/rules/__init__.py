"""The rule library: one failure class per TOML file under `patterns/<area>/<name>.toml`.

`library` loads and checks rule files into a `RuleSet`; `literals` derives the text each regex
requires; `prefilter` searches those literals over many lines at once; `regex_risk` flags
regexes that can backtrack; `samples` reads the annotated sample logs beside each rule; `facts`
loads `facts.toml`, the values that describe a run (CUDA_HOME, versions, launch arguments).
"""

from logsift.rules.facts import FactRule
from logsift.rules.library import Rule, RuleSet, default_pattern_dirs, load_rule, load_rules
from logsift.rules.pattern import Pattern

__all__ = ["FactRule", "Pattern", "Rule", "RuleSet", "default_pattern_dirs", "load_rule", "load_rules"]
