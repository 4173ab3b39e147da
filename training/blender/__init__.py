"""A second renderer: Blender's path tracer (Cycles), run through `bpy`.

The generator's photos come from our own raster renderer (training/synth). A model that learnt
only that renderer's habits could score well on its validation set and still fail on real
photos, so this package draws dice a different way: real 3-D dice with bevelled edges,
path-traced light with soft shadows, reflections and the table's colour bounced onto the dice,
procedural tables and a perspective camera. It makes two kinds of data:

- validation and choosing photos (`--split val|calib`, scene.py): whole 960-px photos whose
  dice take training/synth's val or calib look, so they differ from the generator's in how the
  photo is made, not in what the dice look like; never trained on;
- the training split (`--split train`, crops.py and look.py): small frames around one die each,
  in a look of its own (bodies, inks, fonts, lights, tables and a phone's processing), the
  reader's second source in training (`training.reader --second-data`).

`bpy` is a large optional download, kept out of the main environment: `make data-blender` and
`make data-blender-train` make its own virtual environment (.venv-blender).
"""
