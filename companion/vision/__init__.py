"""Reading dice from photos: ONNX models (detector + reader) and decoding with the physical set.

    from companion.vision import read_image
    reading = read_image("photo.jpg")   # Reading(width, height, dice=[DieReading...], ms)

Run-time needs numpy, Pillow, OpenCV and onnxruntime; never PyTorch.
"""

from companion.vision.reading import DieReading, ImageError, Reading
from companion.vision.pipeline import read_image

__all__ = ["read_image", "Reading", "DieReading", "ImageError"]
