"""A second renderer for validation photos: Blender's path tracer (Cycles), run through `bpy`.

The training photos come from our own raster renderer (training/synth). A model that learnt
that renderer's habits could score well on its validation set and still fail on real photos,
so this package makes validation photos in a different way: real 3-D dice with bevelled
edges, a path-traced sun and sky, soft shadows and reflections, procedural tables and a
perspective camera. Nothing here is ever trained on. The dice's look (body colour, fonts,
inks, 6/9 markers) is drawn from the validation split of training/synth/appearance.py, so
the two sets differ in how the photo is made, not in what the dice look like.

`bpy` is a large optional download, kept out of the main environment: `make data-blender`
makes its own virtual environment (.venv-blender) and the set (data/val_blender).
"""
