"""Small path-traced frames of a few dice: the Blender training split (docs/synthetic_data.md).

The reader learns from a square around each top face (training/common.py: PRECROP_CONTEXT x the
face's box), so a training render needs no whole photo. The camera is aimed at one die (the
subject) from a phone's distance, with 0-4 neighbours of the same set around it, some touching,
at the pixels a face has in the run-time's 960-px working image. Only a region of that view is
rendered (Cycles' border): the subject's reach (every view the reader's training takes of it)
and each neighbour's where taking it in costs no more pixels than a frame of its own. A face
whose views the region does not hold is labelled, but marked `reader_crop: false`. Few samples
and a fast denoise: about a quarter of a second of one core a crop.

The scene is lit in scene-linear light and written as a float image; the phone's white balance,
exposure, tone curve and noise are applied after (look.phone_finish), so the light's colour
reaches the JPEG as a phone leaves it.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy  # first: it makes Blender's other modules importable
import numpy as np
from mathutils import Matrix, Vector  # noqa: E402

from companion.dice import standard_set
from companion.vision.crops import READER_CONTEXT
from training.blender.look import (
    LightPlan, light_rgb, phone_finish, sample_lights, sample_look, sample_phone, train_fonts,
)
from training.blender.scene import Rendered, _add_die, _body_mesh, _empty_scene, _hsv, _label, _material, _roughness, linear
from training.synth.appearance import Appearance
from training.synth.scene import share_in_frame

VIEW_FACES = 12.0  # the camera's whole view, in face sides: every die lies in it; only a region is rendered
FACE_PX = (14.0, 72.0)  # the subject's face side in working-image pixels, drawn log-uniform (larger faces
# are shrunk into the reader's 64-px crop: rendering them bigger would only cost time)
FOCAL_PX = (620.0, 900.0)  # a phone's focal length in working-image pixels (about 56-75 deg across 960 px)
TILT_DEG = 48.0
TABLES = ("felt-green", "felt-blue", "wood", "slate", "plain")
NEIGHBOURS = (0, 1, 2, 3, 4)
NEIGHBOUR_WEIGHTS = (0.2, 0.25, 0.25, 0.2, 0.1)
SUN_STRENGTH = 3.0  # the key light's irradiance; the phone's metering sets the exposure
# how far from a face's centre training.reader's views reach (its crop scaled up to 1.25, turned by
# 45 degrees, shifted by 0.1 of the box), in box sides: a frame that holds less repeats its border
READER_REACH = math.sqrt(2) * READER_CONTEXT / 2 * 1.25 + 0.1


def blender_fonts() -> tuple:
    """The training fonts, with the fonts Blender itself ships (its interface font among them)."""
    return train_fonts((Path(bpy.utils.system_resource("DATAFILES", path="fonts")),))


def _scene(size: int, samples: int, threads: int) -> bpy.types.Scene:
    scene = _empty_scene(size, size, samples)
    scene.render.threads = threads
    scene.cycles.denoising_quality = "FAST"  # the high-quality prefilter costs seconds on a small frame
    scene.cycles.denoising_prefilter = "FAST"
    scene.cycles.max_bounces = 2  # one bounce off the table onto the dice is the colour wanted
    scene.cycles.transparent_max_bounces = 4
    scene.cycles.caustics_reflective = scene.cycles.caustics_refractive = False
    settings = scene.render.image_settings
    settings.file_format, settings.color_depth, settings.exr_codec = "OPEN_EXR", "16", "NONE"
    return scene


def _table(rng: np.random.Generator) -> tuple[bpy.types.Material, str, tuple[float, float, float]]:
    """A felt, wood, slate or plain table; returns its material, kind and mean colour (linear)."""
    kind = TABLES[int(rng.integers(len(TABLES)))]
    mat, bsdf, tree = _material("table")
    if kind == "felt-green":
        hsv, rough = (rng.uniform(0.30, 0.40), rng.uniform(0.45, 0.85), rng.uniform(0.25, 0.6)), 1.0
    elif kind == "felt-blue":
        hsv, rough = (rng.uniform(0.55, 0.64), rng.uniform(0.45, 0.85), rng.uniform(0.25, 0.6)), 1.0
    elif kind == "wood":
        hsv, rough = (rng.uniform(0.04, 0.1), rng.uniform(0.4, 0.8), rng.uniform(0.2, 0.75)), rng.uniform(0.3, 0.8)
    elif kind == "slate":
        hsv, rough = (rng.uniform(0.55, 0.65), rng.uniform(0.03, 0.2), rng.uniform(0.12, 0.32)), rng.uniform(0.45, 0.9)
    else:
        hsv, rough = (rng.uniform(0, 1), rng.uniform(0.0, 0.5), rng.uniform(0.3, 0.9)), rng.uniform(0.2, 0.9)
    base = linear(_hsv(*hsv))
    other = tuple(c * float(rng.uniform(0.55, 0.85)) for c in base)
    bsdf.inputs["Roughness"].default_value = float(rough)
    mix = tree.nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    mix.inputs[6].default_value = (*base, 1)  # colours A and B of the Mix node, output 2 the mix
    mix.inputs[7].default_value = (*other, 1)
    coord = tree.nodes.new("ShaderNodeTexCoord")
    if kind == "wood":
        tex = tree.nodes.new("ShaderNodeTexWave")
        tex.inputs["Scale"].default_value = float(rng.uniform(0.05, 0.3))
        tex.inputs["Distortion"].default_value = float(rng.uniform(2, 12))
    else:
        tex = tree.nodes.new("ShaderNodeTexNoise")
        tex.inputs["Scale"].default_value = float(rng.uniform(2, 40) if kind.startswith("felt") else rng.uniform(0.1, 3))
    tree.links.new(coord.outputs["Object"], tex.inputs["Vector"])
    tree.links.new(tex.outputs[0], mix.inputs[0])
    tree.links.new(mix.outputs[2], bsdf.inputs["Base Color"])
    mean = tuple((b + o) / 2 for b, o in zip(base, other))
    return mat, kind, mean


def _sun(scene, name: str, kelvin: float, strength: float, elevation_deg: float, azimuth_deg: float,
         softness_deg: float) -> None:
    sun = bpy.data.lights.new(name, "SUN")
    sun.energy = strength
    sun.angle = math.radians(softness_deg)
    sun.color = light_rgb(kelvin)
    obj = bpy.data.objects.new(name, sun)
    obj.rotation_euler = (math.radians(90 - elevation_deg), 0.0, math.radians(azimuth_deg))
    scene.collection.objects.link(obj)


def _lights(scene, rng: np.random.Generator, plan: LightPlan) -> None:
    _sun(scene, "key", plan.key_kelvin, SUN_STRENGTH, plan.key_elevation_deg, plan.key_azimuth_deg, plan.key_softness_deg)
    if plan.fill_kelvin is not None:
        _sun(scene, "fill", plan.fill_kelvin, SUN_STRENGTH * plan.fill_share, float(rng.uniform(20, 70)),
             plan.fill_azimuth_deg, float(rng.uniform(2, 25)))
    bg = scene.world.node_tree.nodes["Background"]
    bg.inputs["Color"].default_value = (*light_rgb(plan.ambient_kelvin), 1)
    bg.inputs["Strength"].default_value = SUN_STRENGTH * plan.ambient_share / math.pi


def _neighbour_centres(rng: np.random.Generator, count: int, yaw: float) -> list[tuple[tuple[float, float], float]]:
    """(centre, yaw) of each neighbour: some touching a die already down, square to it, the rest
    loose around the subject; never overlapping."""
    placed = [((0.0, 0.0), yaw)]
    while len(placed) < count + 1:
        for _ in range(200):
            if rng.random() < 0.4:
                (cx, cy), base_yaw = placed[int(rng.integers(len(placed)))]
                side = base_yaw + int(rng.integers(4)) * math.pi / 2
                gap, slide = float(rng.uniform(1.02, 1.15)), float(rng.uniform(-0.45, 0.45))
                centre = (cx + gap * math.cos(side) - slide * math.sin(side), cy + gap * math.sin(side) + slide * math.cos(side))
                new_yaw = base_yaw
            else:
                angle, dist = rng.uniform(0, 2 * math.pi), rng.uniform(1.5, 2.6)
                centre, new_yaw = (dist * math.cos(angle), dist * math.sin(angle)), float(rng.uniform(0, 2 * math.pi))
            if all(_apart(centre, new_yaw, c, y) for c, y in placed):
                placed.append((centre, new_yaw))
                break
        else:
            break
    return placed[1:]


def _apart(a: tuple[float, float], yaw_a: float, b: tuple[float, float], yaw_b: float) -> bool:
    """True when two unit cubes on the table do not overlap (square to each other, or far apart)."""
    d = math.dist(a, b)
    if d >= 1.5:
        return True
    if abs(math.remainder(yaw_a - yaw_b, math.pi / 2)) > 1e-6:
        return False
    c, s = math.cos(-yaw_a), math.sin(-yaw_a)
    dx, dy = b[0] - a[0], b[1] - a[1]
    return max(abs(c * dx - s * dy), abs(s * dx + c * dy)) >= 1.0


def _camera(scene, rng: np.random.Generator, size: int, face_px: float) -> dict:
    focal_px = float(rng.uniform(*FOCAL_PX))
    distance = focal_px / face_px  # die edges: a face of face_px pixels at the aim point
    cam_data = bpy.data.cameras.new("camera")
    cam_data.sensor_fit = "HORIZONTAL"
    cam_data.sensor_width = 36.0
    cam_data.lens = focal_px / size * 36.0
    cam = bpy.data.objects.new("camera", cam_data)
    scene.collection.objects.link(cam)
    scene.camera = cam
    tilt = math.radians(float(TILT_DEG * math.sqrt(rng.random())))  # even over the view's solid angle
    azimuth = float(rng.uniform(0, 2 * math.pi))
    target = Vector((0.0, 0.0, 1.0))
    offset = Vector((math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), math.cos(tilt)))
    position = target + offset * distance
    look = (target - position).to_track_quat("-Z", "Y").to_matrix().to_4x4()
    cam.matrix_world = Matrix.Translation(position) @ look @ Matrix.Rotation(float(rng.uniform(0, 2 * math.pi)), 4, "Z")
    return {"focal_px": round(focal_px, 1), "tilt_deg": round(math.degrees(tilt), 1), "face_px": round(face_px, 1)}


def _read_float_image(path: Path) -> np.ndarray:
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        width, height = image.size
        pixels = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    return np.flipud(pixels.reshape(height, width, 4)[:, :, :3])  # Blender's rows run bottom-up


def _reach(label: dict) -> tuple[float, float, float, float]:
    """The square every view of this face the reader's training takes stays in (image pixels)."""
    x0, y0, x1, y1 = label["box"]
    half = READER_REACH * max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return cx - half, cy - half, cx + half, cy + half


def _region(labels: list[dict], size: int) -> tuple[int, int, int, int]:
    """The part of the size x size view to render: the subject's reach (labels[0]), and each other
    whole face's where taking it in costs no more pixels than a frame of its own would."""
    def area(r) -> float:
        return (r[2] - r[0]) * (r[3] - r[1])

    region = _reach(labels[0])
    for label in labels[1:]:
        if label["truncated"]:
            continue
        reach = _reach(label)
        grown = (min(region[0], reach[0]), min(region[1], reach[1]), max(region[2], reach[2]), max(region[3], reach[3]))
        if area(grown) <= area(region) + area(reach):
            region = grown
    x0, y0 = max(0, math.floor(region[0])), max(0, math.floor(region[1]))
    return x0, y0, min(size, math.ceil(region[2])), min(size, math.ceil(region[3]))


def _in_region(label: dict, region: tuple[int, int, int, int]) -> dict | None:
    """The label in the region's pixels (None when its face lies wholly outside), with
    `reader_crop`: whether the region holds every view the reader's training takes of it."""
    x0, y0, x1, y1 = region
    width, height = x1 - x0, y1 - y0
    poly = np.array(label["polygon"], np.float64) - (x0, y0)
    visible = 0.0 if label["visible"] == 0.0 else min(1.0, share_in_frame(poly, width, height))
    box = [max(0.0, poly[:, 0].min()), max(0.0, poly[:, 1].min()), min(float(width), poly[:, 0].max()),
           min(float(height), poly[:, 1].max())]
    if box[2] <= box[0] or box[3] <= box[1]:
        return None
    out = {**label, "polygon": [[round(x, 1), round(y, 1)] for x, y in poly], "box": [round(v, 1) for v in box],
           "truncated": bool(visible < 0.999), "visible": round(visible, 3)}
    r = _reach(out)
    out["reader_crop"] = bool(not out["truncated"] and r[0] >= 0 and r[1] >= 0 and r[2] <= width and r[3] <= height)
    return out


def _render_region(scene, region: tuple[int, int, int, int], size: int) -> None:
    """Render only the region of the view (Cycles skips the rest), and write it alone."""
    x0, y0, x1, y1 = region
    scene.render.use_border = scene.render.use_crop_to_border = True
    # Blender's border runs from the bottom-left, in shares of the frame that it turns into whole
    # pixels: a quarter pixel in, rounding and truncation both land on the pixel meant
    scene.render.border_min_x, scene.render.border_max_x = (x0 + 0.25) / size, (x1 + 0.25) / size
    scene.render.border_min_y, scene.render.border_max_y = (size - y1 + 0.25) / size, (size - y0 + 0.25) / size


def render_crop(rng: np.random.Generator, workdir: Path, fonts: tuple, samples: int = 8, threads: int = 1) -> Rendered:
    """One frame around one die and the neighbours it takes in, of a freshly drawn look, light,
    table and phone."""
    app: Appearance = sample_look(rng, fonts)
    face_px = float(np.exp(rng.uniform(math.log(FACE_PX[0]), math.log(FACE_PX[1]))))
    size = int(math.ceil(face_px * VIEW_FACES / 2)) * 2
    scene = _scene(size, samples, threads)
    table_mat, table, table_rgb = _table(rng)
    bpy.ops.mesh.primitive_plane_add(size=400)
    bpy.context.active_object.data.materials.append(table_mat)
    body_mat, bsdf, _ = _material("body")
    bsdf.inputs["Base Color"].default_value = (*linear(app.body_rgb), 1)
    bsdf.inputs["Roughness"].default_value = _roughness(app)
    body = _body_mesh(float(np.clip(app.bevel, 0.04, 0.16)))
    body.materials.append(body_mat)
    dice = standard_set().dice
    count = 1 + int(rng.choice(NEIGHBOURS, p=NEIGHBOUR_WEIGHTS))
    chosen = [dice[i] for i in rng.choice(len(dice), count, replace=False)]  # the first is the subject
    yaw = float(rng.uniform(0, 2 * math.pi))
    spots = [((0.0, 0.0), yaw)] + _neighbour_centres(rng, count - 1, yaw)
    tops = [int(rng.integers(6)) for _ in spots]
    objects = []
    for die, (centre, die_yaw), top in zip(chosen, spots, tops):
        obj = _add_die(scene, rng, app, die, body, centre, top)
        obj.rotation_euler = (0.0, 0.0, die_yaw)  # square to the die it touches
        objects.append(obj)
    plan = sample_lights(rng)
    _lights(scene, rng, plan)
    camera = _camera(scene, rng, size, face_px)
    bpy.context.view_layer.update()
    in_view = [_label(scene, scene.camera, o, d, d.faces[t], size, size) for o, d, t in zip(objects, chosen, tops)]
    region = _region(in_view, size)
    labels = [d for d in (_in_region(d, region) for d in in_view) if d is not None]
    out = workdir / "render.exr"
    scene.render.filepath = str(out)
    _render_region(scene, region, size)
    bpy.ops.render.render(write_still=True)
    rendered = _read_float_image(out)
    if rendered.shape[:2] != (region[3] - region[1], region[2] - region[0]):
        raise RuntimeError(f"Blender rendered {rendered.shape[1]} x {rendered.shape[0]} px of the region {region}")
    phone = sample_phone(rng, face_px)
    image = phone_finish(rendered, plan, phone, table_rgb, rng)
    conditions = {"renderer": "blender-cycles", "split": "train", "kind": "crop", "subject": chosen[0].id,
                  **app.conditions(), "n_dice": len(objects), "table": table, "light": plan.conditions(),
                  "body_on_table": f"{app.body_name} on {table}", **camera, "samples": samples,
                  "phone": phone.conditions(), "jpeg_quality": phone.jpeg_quality}
    return Rendered(image, labels, conditions)
