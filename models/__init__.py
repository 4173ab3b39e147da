"""The shipped ONNX models, shipped as package data: `companion.models` (see companion/assets.py).

The model card is README.md next to this file.
"""
