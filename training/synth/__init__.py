"""Synthetic photos of Phase 10 dice with exact labels, for training and validating the vision
models. See docs/synthetic_data.md; `python -m training.synth --help` makes a dataset."""
