"""Reading dice from photos: ONNX models (detector + reader) and decoding with the physical set.

    from companion.vision import read_image
    reading = read_image("photo.jpg")   # Reading(width, height, dice=[DieReading...], ms)

`read_image(source, models, settings)` takes loaded models (None: load those the settings
name) and a ReadSettings (the defaults are the shipped pipeline). Run-time needs numpy,
Pillow, OpenCV and onnxruntime; never PyTorch.
"""

from companion.vision.reading import DieReading, ImageError, Reading
from companion.vision.pipeline import read_image
from companion.vision.settings import ReadSettings

__all__ = ["read_image", "ReadSettings", "Reading", "DieReading", "ImageError"]
