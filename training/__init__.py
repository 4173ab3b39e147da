"""Training-time code: the synthetic data generator and the model training scripts.

Nothing here is imported at run time by `companion`.
"""
