"""The learned fallback: a small model for failures that no rule names, and its evaluation.

`masking` turns lines into templates; `training` chooses what the model learns from (rule
samples, scenario fixtures); `classifier` trains, caches and asks the model; `clustering`
groups unknown failures into templates; `evaluation` measures generalisation and honesty.
scikit-learn is imported only to train.
"""
